// Mock of <ATen/ATen.h>: the at:: part of the mock LibTorch.
#pragma once
#include <torch/torch.h>
