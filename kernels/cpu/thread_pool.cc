#include "kernels/cpu/thread_pool.h"

#include <algorithm>
#include <chrono>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace maxc::cpu {
namespace {

thread_local ThreadPool* t_current_pool = nullptr;
thread_local bool t_in_chunk = false;

// How long an idle worker watches for the next job before it sleeps. Steps of a plan follow
// each other within microseconds, and a futex wake costs about as much, so a short watch
// keeps workers warm between steps; a bounded one gives the core back when the model is idle
// or the machine is busy.
constexpr auto kSpin = std::chrono::microseconds(50);

void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#endif
}

// Marks the calling thread as running a chunk for the scope, so that a parallel_for in the
// chunk runs inline.
class InChunk {
 public:
  InChunk() : previous_(t_in_chunk) { t_in_chunk = true; }
  ~InChunk() { t_in_chunk = previous_; }

 private:
  bool previous_;
};

}  // namespace

struct ThreadPool::Job {
  Job(ChunkFn f, void* c, int64_t n) : fn(f), context(c), chunks(n) {}

  ChunkFn fn;
  void* context;
  int64_t chunks;
  std::atomic<int64_t> next{0};     // the next chunk to claim; claims past `chunks` find none
  std::atomic<int32_t> helpers{0};  // workers inside run_chunks; changed under the pool's mutex
  std::atomic<bool> failed{false};  // a chunk threw: the others are claimed but not run
  std::mutex error_mutex;
  std::exception_ptr error;  // the first chunk's exception

  bool has_chunks() const {
    return next.load(std::memory_order_relaxed) < chunks && !failed.load(std::memory_order_relaxed);
  }
};

ThreadPool::ThreadPool(int32_t threads) {
  const int32_t workers = std::max(threads, 1) - 1;
  jobs_.reserve(16);
  workers_.reserve(workers);
  for (int32_t i = 0; i < workers; ++i) workers_.emplace_back([this] { work(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  work_cv_.notify_all();
  for (std::thread& t : workers_) t.join();
}

bool ThreadPool::in_chunk() { return t_in_chunk; }

void ThreadPool::run(int64_t chunks, ChunkFn fn, void* context) {
  if (chunks <= 0) return;
  if (workers_.empty() || chunks == 1 || t_in_chunk) {
    InChunk scope;
    for (int64_t c = 0; c < chunks; ++c) fn(context, c);
    return;
  }
  Job job{fn, context, chunks};
  {
    std::lock_guard<std::mutex> lock(mutex_);
    jobs_.push_back(&job);
    published_.fetch_add(1, std::memory_order_release);
  }
  wake(chunks - 1);
  run_chunks(job, job.next.fetch_add(1));
  {
    // No worker joins the job once it leaves the list; the caller then waits only for the
    // workers that hold a claimed chunk (a worker counts itself in `helpers` under the mutex
    // in the same step as it claims its first chunk).
    std::unique_lock<std::mutex> lock(mutex_);
    jobs_.erase(std::find(jobs_.begin(), jobs_.end(), &job));
    done_cv_.wait(lock, [&] { return job.helpers.load(std::memory_order_relaxed) == 0; });
  }
  if (job.error) std::rethrow_exception(job.error);
}

void ThreadPool::wake(int64_t helpers) {
  if (helpers >= static_cast<int64_t>(workers_.size())) {
    work_cv_.notify_all();
  } else {
    for (int64_t i = 0; i < helpers; ++i) work_cv_.notify_one();
  }
}

void ThreadPool::run_chunks(Job& job, int64_t first) {
  InChunk scope;
  for (int64_t c = first; c < job.chunks; c = job.next.fetch_add(1)) {
    if (job.failed.load(std::memory_order_relaxed)) continue;
    try {
      job.fn(job.context, c);
    } catch (...) {
      std::lock_guard<std::mutex> lock(job.error_mutex);
      if (!job.error) job.error = std::current_exception();
      job.failed.store(true, std::memory_order_relaxed);
    }
  }
}

ThreadPool::Job* ThreadPool::job_with_chunks() {
  for (size_t i = 0; i < jobs_.size(); ++i) {
    const size_t at = (next_job_ + i) % jobs_.size();
    if (jobs_[at]->has_chunks()) {
      next_job_ = at + 1;  // the next worker looks at the next caller's job first
      return jobs_[at];
    }
  }
  return nullptr;
}

void ThreadPool::work() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    Job* job = job_with_chunks();
    if (!job) {
      if (stop_) return;
      // Watch for a new job for a moment without the lock, then sleep until one comes.
      const int64_t seen = published_.load(std::memory_order_acquire);
      lock.unlock();
      const auto until = std::chrono::steady_clock::now() + kSpin;
      for (int i = 0; published_.load(std::memory_order_acquire) == seen; ++i) {
        cpu_relax();
        if (i % 64 == 63 && std::chrono::steady_clock::now() > until) break;
      }
      lock.lock();
      work_cv_.wait(lock, [&] { return stop_ || (job = job_with_chunks()) != nullptr; });
      if (!job) return;  // stopping
    }
    const int64_t first = job->next.fetch_add(1);
    if (first >= job->chunks) continue;  // the caller took the last chunk meanwhile
    job->helpers.fetch_add(1, std::memory_order_relaxed);
    lock.unlock();
    run_chunks(*job, first);
    lock.lock();
    // The last touch of the job: once helpers is 0 under the mutex its caller may return.
    if (job->helpers.fetch_sub(1, std::memory_order_relaxed) == 1) done_cv_.notify_all();
  }
}

ThreadPool* current_pool() { return t_current_pool; }

int32_t pool_threads() { return t_current_pool ? t_current_pool->threads() : 1; }

PoolScope::PoolScope(ThreadPool* pool) : previous_(t_current_pool) { t_current_pool = pool; }

PoolScope::~PoolScope() { t_current_pool = previous_; }

}  // namespace maxc::cpu
