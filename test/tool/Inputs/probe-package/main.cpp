// Marks 7 steps; without CUDA the probe records no sync, but it starts from
// the environment, counts the steps and writes a profile torch-syncfree reads.
#include <torch_syncfree/probe.h>
#include <chrono>
#include <thread>

int main() {
  for (int i = 0; i < 7; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    torch_syncfree::probe::step();
  }
  return 0;
}
