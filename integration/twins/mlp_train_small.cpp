// Sync-free twin of programs/mlp_train_small.cpp (launch-bound: hidden 1024, batch 256).
#include "mlp_train_twin.h"

int main() { return mlpTrainTwin("mlp_train_small", 1024, 256); }
