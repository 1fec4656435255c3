// RUN: %check_torch_sync %s torch-sync-item %t -- %mock_flags
// A value streamed into a logging macro's own record type (plog:
// `PLOG_INFO << v` expands to `logger += plog::Record(..).ref() << v`, whose
// `<<` is plog's, not std::ostream's) is only logged (issue 43, fresh sample
// 5: `PLOG_INFO << ".." << acceptance.cpu().data_ptr<float>()[0]` was called
// a true dependency). A `<<` into a record no logging macro makes is not.
#include <torch/torch.h>

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
  // Not "only logged". (Today's verdict, "unused", treats the discarded result of
  // a user type's `<<` as a shift's: a known gap, docs/checks/torch-sync-item.md.)
  // CHECK-MESSAGES: :[[@LINE-3]]:21: warning: `item()` on a GPU tensor {{.*}}; false dependency: the value is unused;
}
