// Sync-free twin of programs/vector_batches_large.cpp (GPU-bound: hidden 4096, batch 2048).
#include "vector_batches_twin.h"

int main() { return vectorBatchesTwin("vector_batches_large", 4096, 2048); }
