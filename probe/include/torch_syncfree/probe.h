// torch-syncfree's sync probe: link it into your own LibTorch program to
// record where the host waits for the GPU, then join the profile with the
// findings (`torch-syncfree --profile=<file>`, docs/profiles.md).
//
// Off unless TORCH_SYNCFREE_PROFILE=<file> is set when the program starts (or
// torch_syncfree::probe::start(file) is called): off, it installs nothing and
// costs nothing. On, it records
//   * every sync PyTorch's sync debug mode reports (c10's warning handler),
//   * every cudaDeviceSynchronize / cudaStreamSynchronize /
//     cudaEventSynchronize / cudaMemcpy the process makes, with its host wait
//     (the probe interposes these CUDA runtime calls),
// each with its call stack (module + offset; torch-syncfree symbolizes them
// from the DWARF of a -g build). The profile is written at exit and every
// TORCH_SYNCFREE_PROFILE_FLUSH_S seconds (default 5), so a crash leaves one.
#pragma once

namespace torch_syncfree {
namespace probe {

/// Starts recording into Path (a JSON profile, format version 1).
void start(const char *Path);
/// Marks the end of one step (a training or inference iteration): the profile
/// reports counts per step and the mean step time.
void step();
/// Writes the profile now (also done at exit and periodically).
void flush();

} // namespace probe
} // namespace torch_syncfree
