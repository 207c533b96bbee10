// A file that shrinks under its mapping must not kill the process. Reading a mapped page
// that lies past the file's end (another process truncated it) makes the kernel send SIGBUS,
// whose default action ends the process. Every read-only file mapping we make registers here;
// one process-wide SIGBUS handler answers a fault inside a registered mapping by mapping zero
// pages over the mapping from the faulting page on (mmap MAP_FIXED, a plain system call) and
// marking it damaged, and the faulting read resumes and reads zeros. The API call that read
// it then reports DATA_LOSS naming the file (mapping_damage_error), instead of the results
// computed from those zeros.
//
// Why this and not the alternatives: it keeps weights zero-copy (copying on load doubles the
// memory of a model and its load time); it works on every thread that touches the bytes,
// including the thread pool's workers and oneDNN's, with nothing to unwind (a
// sigsetjmp/siglongjmp guard would have to skip C++ destructors and locks held by kernels,
// and only covers the thread that set it); MAP_POPULATE plus size checks cannot help, since
// the kernel drops clean pages under memory pressure and reads them back from the file.
//
// A fault outside every registered mapping is passed to the handler that was there before
// (the default action, Python's faulthandler, the JVM's), so nothing else changes. Our
// handler is put back in place, chaining to whatever replaced it, each time a file is mapped:
// a handler installed later without chaining (a test framework's, around each test) takes
// SIGBUS for the files mapped before it until then. Bytes
// of a weights tensor read outside the library (an exported DLPack view) read as zeros past
// the new end; the next execute that reads the file reports the damage. A damaged mapping
// stays damaged: reload the weights from an intact file.
//
// Thread-safety: everything here may be called from any thread.
#pragma once

#include <cstdint>
#include <string>

namespace maxc {

// Registers [data, data + size) as a read-only mapping of the file `path` for as long as it
// lives. Unregister before unmapping (the destructor does).
class GuardedMapping {
 public:
  GuardedMapping(const void* data, uint64_t size, std::string path);
  GuardedMapping(const GuardedMapping&) = delete;
  GuardedMapping& operator=(const GuardedMapping&) = delete;
  ~GuardedMapping();

  // Whether a read found the file shorter than the mapping.
  bool damaged() const;

 private:
  int slot_;  // -1: the table was full; the mapping is unguarded
};

// Faults answered so far, in every mapping: a call compares it before and after.
uint64_t mapping_fault_count();

// Empty when [p, p + n) touches no damaged mapping; else the DATA_LOSS message naming the file.
std::string mapping_damage_error(const void* p, uint64_t n);

// The DATA_LOSS message for the damaged mappings, all of them ("" when there is none).
std::string any_mapping_damage_error();

}  // namespace maxc
