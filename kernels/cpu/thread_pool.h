// The CPU thread pool (DESIGN §5): one per context, `threads` in all, of which the calling
// thread is one and the other threads - 1 are the pool's workers.
//
// A job is `chunks` independent calls of a body. The caller claims chunks itself, from an
// atomic counter; idle workers wake and claim chunks too when the OS runs them. When no
// chunk is left to claim the caller waits only for chunks already in progress, never for a
// worker that has not started one, so a worker the OS has descheduled (the cores are shared)
// costs the job nothing: the caller has done its chunks instead. An OpenMP static team
// cannot finish a region until every one of its threads has run, and so stalled each step
// for a scheduler time slice on a loaded machine.
//
// Several callers share one pool (concurrent execute calls on one model, or the models of
// one context): each publishes its job in a small list, and a worker that wakes takes chunks
// of the first job that still has some, going round the list so no caller is starved. A
// caller never waits for a place in the list, so max_c never runs more threads than the
// pool's workers plus its callers.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace maxc::cpu {

class ThreadPool {
 public:
  // A body: fn(context, chunk). A plain function pointer so the pool is not a template.
  using ChunkFn = void (*)(void* context, int64_t chunk);

  // `threads` >= 1: the caller and threads - 1 workers (started here).
  explicit ThreadPool(int32_t threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int32_t threads() const { return static_cast<int32_t>(workers_.size()) + 1; }

  // Calls fn(context, c) once for each c in [0, chunks), on the caller and on whichever
  // workers are free, and returns when all have returned. The first exception a chunk
  // throws is rethrown here after every chunk in progress has ended; chunks not yet started
  // are skipped. A chunk that calls parallel_for runs that loop inline (see in_chunk()).
  void run(int64_t chunks, ChunkFn fn, void* context);

  // Whether the calling thread is running a chunk of some pool's job.
  static bool in_chunk();

 private:
  struct Job;

  void work();
  Job* job_with_chunks();  // under mutex_
  static void run_chunks(Job& job, int64_t first);
  void wake(int64_t helpers);

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable work_cv_;  // a job was published, or the pool stops
  std::condition_variable done_cv_;  // a worker left a job
  std::vector<Job*> jobs_;           // the jobs whose caller still claims chunks
  size_t next_job_ = 0;              // where workers start looking in jobs_
  std::atomic<int64_t> published_{0};  // bumped per job: what spinning workers watch
  bool stop_ = false;
};

// The pool kernels run on: the one the executor made current on this thread (PoolScope), or
// none (everything runs on the calling thread).
ThreadPool* current_pool();

// How many threads the current pool has (1 without one): what kernels size their split by.
int32_t pool_threads();

// Makes `pool` the calling thread's current pool until the scope ends (nullptr: none).
class PoolScope {
 public:
  explicit PoolScope(ThreadPool* pool);
  ~PoolScope();
  PoolScope(const PoolScope&) = delete;
  PoolScope& operator=(const PoolScope&) = delete;

 private:
  ThreadPool* previous_;
};

}  // namespace maxc::cpu
