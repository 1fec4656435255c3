// Mock of <torch/version.h> (included by <torch/torch.h>, as torch/all.h does).
// LibTorch 2.11 by default; -DMOCK_LIBTORCH_1_13 selects 1.13, and
// -DMOCK_LIBTORCH_UNVERSIONED leaves the macros undefined, as for a unit whose
// headers do not include <torch/version.h> (<ATen/ATen.h> or <torch/script.h> alone).
#pragma once
#if defined(MOCK_LIBTORCH_1_13)
#define TORCH_VERSION_MAJOR 1
#define TORCH_VERSION_MINOR 13
#define TORCH_VERSION_PATCH 0
#elif !defined(MOCK_LIBTORCH_UNVERSIONED)
#define TORCH_VERSION_MAJOR 2
#define TORCH_VERSION_MINOR 11
#define TORCH_VERSION_PATCH 0
#endif
