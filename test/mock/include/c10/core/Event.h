// Mock of c10/core/Event.h and c10/core/Stream.h: the device-generic event and stream.
#pragma once
#include <torch/torch.h>
namespace c10 {
struct Stream {
  bool query() const;
  void synchronize() const;
};
struct Event {
  explicit Event(DeviceType type);
  void record(const Stream &stream);
  bool query() const;
  void synchronize() const;
};
} // namespace c10
