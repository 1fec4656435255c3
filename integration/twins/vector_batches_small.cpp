// Sync-free twin of programs/vector_batches_small.cpp (launch-bound: hidden 1024, batch 256).
#include "vector_batches_twin.h"

int main() { return vectorBatchesTwin("vector_batches_small", 1024, 256); }
