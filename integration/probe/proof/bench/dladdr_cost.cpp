// What the probe's stack() pays per frame: one dladdr() per return address.
// dladdr looks for the nearest symbol too, over the module's dynamic symbol
// table; libtorch_cpu.so exports hundreds of thousands of symbols. Prints the
// mean cost of one call for an address in libtorch_cpu.so, libc10.so, libc and
// this program, and of one backtrace() of this (shallow) stack.
#include <torch/torch.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <dlfcn.h>
#include <execinfo.h>
#include <link.h>
#include <string>

struct Module {
  const char *Want;
  uintptr_t Base = 0, Size = 0;
  std::string Name;
};

static int find(struct dl_phdr_info *Info, size_t, void *Data) {
  auto *M = static_cast<Module *>(Data);
  std::string Name = Info->dlpi_name ? Info->dlpi_name : "";
  if (M->Base || (M->Want[0] ? Name.find(M->Want) == std::string::npos : !Name.empty()))
    return 0;
  for (int I = 0; I < Info->dlpi_phnum; ++I)
    if (Info->dlpi_phdr[I].p_type == PT_LOAD && (Info->dlpi_phdr[I].p_flags & PF_X)) {
      M->Base = Info->dlpi_addr + Info->dlpi_phdr[I].p_vaddr;
      M->Size = Info->dlpi_phdr[I].p_memsz;
      M->Name = Name.empty() ? "(this program)" : Name;
      return 1;
    }
  return 0;
}

static void measure(const char *Want) {
  Module M{Want};
  dl_iterate_phdr(find, &M);
  if (!M.Base) {
    std::printf("dladdr %-20s not loaded\n", Want);
    return;
  }
  const int Addresses = 64, Rounds = 20;
  volatile uintptr_t Sink = 0;
  auto Start = std::chrono::steady_clock::now();
  for (int R = 0; R < Rounds; ++R)
    for (int A = 0; A < Addresses; ++A) {
      Dl_info Info;
      void *P = reinterpret_cast<void *>(M.Base + (M.Size / Addresses) * A + 17);
      if (dladdr(P, &Info))
        Sink = Sink + reinterpret_cast<uintptr_t>(Info.dli_fbase);
    }
  double Us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - Start).count();
  std::printf("dladdr %-20s %10.1f us/call (%d calls; text %.1f MB; %s)\n", Want[0] ? Want : "(program)",
              Us / (Addresses * Rounds), Addresses * Rounds, M.Size / 1e6, M.Name.c_str());
}

int main() {
  auto T = torch::ones({4}) + 1; // libtorch loaded and used
  measure("libtorch_cpu.so");
  measure("libtorch_cuda.so");
  measure("libc10.so");
  measure("libc.so");
  measure("");
  void *Frames[48];
  auto Start = std::chrono::steady_clock::now();
  int N = 0;
  for (int I = 0; I < 1000; ++I)
    N += backtrace(Frames, 48);
  double Us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - Start).count();
  std::printf("backtrace (%d frames) %10.1f us/call\n", N / 1000, Us / 1000);
  std::printf("RESULT t %.1f\n", T.sum().item<double>());
  return 0;
}
