// Sync-free twin of programs/mlp_train_large.cpp (GPU-bound: hidden 4096, batch 2048).
#include "mlp_train_twin.h"

int main() { return mlpTrainTwin("mlp_train_large", 4096, 2048); }
