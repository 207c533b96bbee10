#include "base/guarded_mapping.h"

#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <mutex>

#include "base/log.h"
#include "base/str_cat.h"

namespace maxc {
namespace {

// The signal handler reads only these atomics; registration writes them under the mutex.
// A fixed table: the handler may neither allocate nor lock. Far more slots than files a
// process maps at once (a sharded checkpoint has tens).
constexpr int kSlots = 4096;

struct Slot {
  std::atomic<uintptr_t> begin{0};  // 0: free
  std::atomic<uintptr_t> end{0};    // page-rounded: the kernel maps whole pages
  std::atomic<uint32_t> damaged{0};
};

struct Table {
  Slot slots[kSlots];
  std::mutex mu;
  bool used[kSlots] = {};         // under mu
  std::string paths[kSlots];      // under mu
  std::atomic<uint64_t> faults{0};
  // The handler we pass other faults to. Each (re)installation saves the one it replaces in
  // the next entry, never overwritten, and publishes it: the signal handler may be reading
  // the previous entry on another thread.
  static constexpr int kInstalls = 64;
  struct sigaction saved[kInstalls] = {};  // under mu
  int installs = 0;                        // under mu
  std::atomic<const struct sigaction*> previous{nullptr};
  const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
};

Table& table() {
  static Table t;
  return t;
}

// Set while this thread is in pass_on: a previous handler that hands the signal back to us
// (one that saved ours as its own previous) must not make the two call each other for ever.
__attribute__((tls_model("initial-exec"))) thread_local int t_passing_on = 0;

void die_by_default(int sig) {
  struct sigaction dfl{};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  sigaction(sig, &dfl, nullptr);
  raise(sig);
}

// Hands a SIGBUS that is not ours to whoever handled it before us.
void pass_on(int sig, siginfo_t* info, void* context) {
  const struct sigaction* saved = table().previous.load(std::memory_order_acquire);
  if (!saved || t_passing_on) {
    die_by_default(sig);
    return;
  }
  const struct sigaction& prev = *saved;
  struct Passing {
    Passing() { ++t_passing_on; }
    ~Passing() { --t_passing_on; }
  } passing;
  if (prev.sa_flags & SA_SIGINFO) {
    prev.sa_sigaction(sig, info, context);
  } else if (prev.sa_handler != SIG_DFL && prev.sa_handler != SIG_IGN) {
    prev.sa_handler(sig);
  } else if (info->si_code <= 0) {
    die_by_default(sig);  // a signal someone sent: what the default would have done
  } else {
    // A real fault: with the default restored it recurs when the read resumes, and the
    // process ends as it would have without us.
    struct sigaction dfl{};
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(sig, &dfl, nullptr);
  }
}

void on_sigbus(int sig, siginfo_t* info, void* context) {
  const int saved_errno = errno;
  Table& t = table();
  const auto addr = reinterpret_cast<uintptr_t>(info->si_addr);
  if (info->si_code > 0) {  // raised by the kernel for this address, not sent by someone
    for (Slot& s : t.slots) {
      const uintptr_t begin = s.begin.load(std::memory_order_acquire);
      const uintptr_t end = s.end.load(std::memory_order_acquire);
      if (begin == 0 || addr < begin || addr >= end) continue;
      // The rest of the mapping becomes zeros: every later page is past the end too, and one
      // fault answers them all.
      const uintptr_t page = addr & ~(t.page - 1);
      void* zeros = mmap(reinterpret_cast<void*>(page), end - page, PROT_READ,
                         MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
      if (zeros == MAP_FAILED) break;
      s.damaged.store(1, std::memory_order_release);
      t.faults.fetch_add(1, std::memory_order_acq_rel);
      errno = saved_errno;
      return;  // the read resumes, on zeros
    }
  }
  errno = saved_errno;
  pass_on(sig, info, context);
}

// Puts our handler in place unless it is there. Called whenever a file is mapped: code that
// installs its own SIGBUS handler after us and restores the one it found later (a test
// framework around each test) would otherwise leave the mappings made in between unguarded.
// The handler found is the one faults outside our mappings go to. Under t.mu.
void install_handler(Table& t) {
  struct sigaction current{};
  if (sigaction(SIGBUS, nullptr, &current) != 0) return;
  if ((current.sa_flags & SA_SIGINFO) && current.sa_sigaction == on_sigbus) return;
  if (t.installs == Table::kInstalls) {
    static bool warned = false;  // under t.mu
    if (!warned)
      MAXC_LOG(kWarning, "SIGBUS has been taken from the mapped-file guard ", Table::kInstalls,
               " times: it is left to its current handler");
    warned = true;
    return;
  }
  struct sigaction act{};
  act.sa_sigaction = on_sigbus;
  // SA_ONSTACK: Go requires it of handlers installed by C code in its processes.
  act.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
  sigemptyset(&act.sa_mask);
  struct sigaction& saved = t.saved[t.installs];
  // The slot is published before the switch, so a fault at any moment finds a previous.
  if (sigaction(SIGBUS, nullptr, &saved) != 0) return;
  t.previous.store(&saved, std::memory_order_release);
  ++t.installs;
  if (sigaction(SIGBUS, &act, nullptr) != 0)
    MAXC_LOG(kWarning, "cannot install the SIGBUS handler: a mapped file that shrinks will end the process");
}

std::string damage_message(int i) {
  return str_cat("the file \"", table().paths[i],
                 "\" is shorter than when it was mapped (truncated or rewritten while in use, or "
                 "unreadable): its bytes past the new end read as zeros; load it again");
}

}  // namespace

GuardedMapping::GuardedMapping(const void* data, uint64_t size, std::string path) : slot_(-1) {
  if (!data || size == 0) return;
  Table& t = table();
  std::lock_guard lock(t.mu);
  install_handler(t);
  const auto begin = reinterpret_cast<uintptr_t>(data);
  const uintptr_t end = (begin + size + t.page - 1) & ~(t.page - 1);
  for (int i = 0; i < kSlots; ++i) {
    if (t.used[i]) continue;
    t.used[i] = true;
    t.paths[i] = std::move(path);
    t.slots[i].damaged.store(0, std::memory_order_relaxed);
    t.slots[i].end.store(end, std::memory_order_release);
    t.slots[i].begin.store(begin, std::memory_order_release);
    slot_ = i;
    return;
  }
  MAXC_LOG(kWarning, "more than ", kSlots, " files mapped at once: \"", path,
           "\" is not guarded; if it shrinks while mapped, a read ends the process");
}

GuardedMapping::~GuardedMapping() {
  if (slot_ < 0) return;
  Table& t = table();
  std::lock_guard lock(t.mu);
  t.slots[slot_].begin.store(0, std::memory_order_release);
  t.slots[slot_].end.store(0, std::memory_order_release);
  t.used[slot_] = false;
  t.paths[slot_].clear();
}

bool GuardedMapping::damaged() const {
  return slot_ >= 0 && table().slots[slot_].damaged.load(std::memory_order_acquire) != 0;
}

uint64_t mapping_fault_count() { return table().faults.load(std::memory_order_acquire); }

std::string mapping_damage_error(const void* p, uint64_t n) {
  if (mapping_fault_count() == 0) return {};  // the fast path: nothing ever shrank
  Table& t = table();
  const auto a = reinterpret_cast<uintptr_t>(p);
  std::lock_guard lock(t.mu);
  for (int i = 0; i < kSlots; ++i) {
    const Slot& s = t.slots[i];
    if (!t.used[i] || !s.damaged.load(std::memory_order_acquire)) continue;
    const uintptr_t begin = s.begin.load(std::memory_order_relaxed), end = s.end.load(std::memory_order_relaxed);
    if (a < end && a + n > begin) return damage_message(i);
  }
  return {};
}

std::string any_mapping_damage_error() {
  if (mapping_fault_count() == 0) return {};
  Table& t = table();
  std::lock_guard lock(t.mu);
  for (int i = 0; i < kSlots; ++i)
    if (t.used[i] && t.slots[i].damaged.load(std::memory_order_acquire)) return damage_message(i);
  return {};
}

}  // namespace maxc
