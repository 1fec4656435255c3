// RUN: %check_torch_sync %s torch-sync-item %t -- %mock_flags
// A value streamed into a logging macro's own record type (plog:
// `PLOG_INFO << v` expands to `logger += plog::Record(..).ref() << v`, whose
// `<<` is plog's, not std::ostream's) is only logged (issue 43, fresh sample
// 5: `PLOG_INFO << ".." << acceptance.cpu().data_ptr<float>()[0]` was called
// a true dependency). A `<<` into a record no logging macro makes is not.
#include <torch/torch.h>
#include <iostream>

namespace plog {
struct Record {
  Record &ref();
  template <typename T> Record &operator<<(const T &value);
};
struct Logger {
  Logger &operator+=(Record &record);
};
Logger *get();
} // namespace plog
#define PLOG_(record) (*plog::get()) += plog::Record().ref()
#define PLOG_INFO PLOG_(info)

struct Packet {
  template <typename T> Packet &operator<<(const T &value);
};

void logged(torch::Tensor t) {
  auto g = t.cuda();
  PLOG_INFO << "acceptance = " << g.sum().item<float>();
  // CHECK-MESSAGES: :[[@LINE-1]]:43: warning: `item()` on a GPU tensor {{.*}}; false dependency: the value is only logged;
}
void packed(torch::Tensor t, Packet &packet) {
  auto g = t.cuda();
  packet << g.sum().item<float>();
  // Not "only logged", not "unused" (the discarded result is no shift's): the
  // packet takes the value, as a call would.
  // CHECK-MESSAGES: :[[@LINE-3]]:21: warning: `item()` on a GPU tensor {{.*}}; true dependency: the value is passed to `Packet::operator<<`;
}

// The program's own logger: its `<<` only streams the value into std::cout.
struct ConsoleLog {
  template <typename T> ConsoleLog &operator<<(const T &value) {
    std::cout << value;
    return *this;
  }
};
struct Archive {
  std::vector<float> values;
};
Archive &operator<<(Archive &archive, float value);

void consoleLogged(torch::Tensor t, ConsoleLog &log, Archive &archive) {
  auto g = t.cuda();
  log << "sum " << g.sum().item<float>();
  // CHECK-MESSAGES: :[[@LINE-1]]:28: warning: `item()` on a GPU tensor {{.*}}; false dependency: the value is only logged;
  archive << g.max().item<float>();
  // CHECK-MESSAGES: :[[@LINE-1]]:22: warning: `item()` on a GPU tensor {{.*}}; true dependency: the value is passed to `operator<<`;
}
