// libmax_c_emulated_nvrtc.so: NVRTC's C API, answered by the host C++ compiler. A program's
// source is compiled as host code after the CUDA emulator (tests/gpu_emu/cuda_emulator.h), into
// a shared object that is the "cubin" the emulated driver loads; each requested name
// expression becomes an extern "C" entry that binds a launch's parameters to that kernel
// (emulated_module.h). See README.md beside this file.
//
// It reports itself as NVRTC 0.1 for sm_80 and sm_90: the version is part of the kernel
// cache's key, so its images never mix with a real NVRTC's.
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <filesystem>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "emulated_gpu/emulated_launch.h"

#ifndef MAXC_EMULATED_CXX
#error "MAXC_EMULATED_CXX (the host compiler) is set by tests/CMakeLists.txt"
#endif

namespace {

using Result = int;  // nvrtcResult
constexpr Result kSuccess = 0, kInvalidInput = 3, kInvalidProgram = 4, kCompilation = 6,
                 kNameExpressionNotValid = 10, kInternal = 11;

struct Program {
  std::string source, name;
  std::vector<std::pair<std::string, std::string>> headers;
  std::vector<std::string> name_expressions;
  std::vector<std::string> lowered;  // the entry of each name expression, once compiled
  std::string image, log;
  bool compiled = false;
};

// The lowered name of name expression i (the driver looks its entry up by it): unique by i,
// and spelling the expression (its non-identifier characters as '_') so that a test reading
// the driver's launches sees which kernel and template ran.
std::string lowered_name(size_t i, const std::string& expression) {
  std::string name = "maxc_emulated_kernel_" + std::to_string(i) + "_";
  for (char c : expression) name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return name;
}

// The extern "C" kernels a source defines (generated ones are): found by the driver under
// their own names, as on a GPU.
std::vector<std::string> extern_c_kernels(const std::string& source) {
  static const std::string kMark = "extern \"C\" __global__ void ";
  std::vector<std::string> names;
  for (size_t at = source.find(kMark); at != std::string::npos; at = source.find(kMark, at + 1)) {
    const size_t begin = at + kMark.size(), end = source.find('(', begin);
    if (end != std::string::npos) names.push_back(source.substr(begin, end - begin));
  }
  return names;
}

std::string entry(const std::string& function, const std::string& kernel) {
  return "extern \"C\" __attribute__((visibility(\"default\"))) maxc::emulated_gpu::BoundLaunch* " +
         std::string(maxc::emulated_gpu::kEntryPrefix) + function +
         "(void** params) { return maxc::emulated_gpu::bind_launch(&" + kernel + ", params); }\n";
}

// The module's source: the prelude (the emulator and the binding template, precompiled), the
// kernel source, the entries.
std::string module_source(const Program& p) {
  std::ostringstream s;
  s << "#include \"emulated_prelude.h\"\n";
  s << "#line 1 \"" << p.name << "\"\n" << p.source << "\n";
  for (size_t i = 0; i < p.name_expressions.size(); ++i) s << entry(lowered_name(i, p.name_expressions[i]), p.name_expressions[i]);
  for (const std::string& name : extern_c_kernels(p.source)) s << entry(name, name);
  return s.str();
}

bool write_file(const std::string& path, const std::string& text) {
  // Headers may sit in folders ("common/platform.cuh").
  std::error_code ignored;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ignored);
  std::ofstream f(path, std::ios::binary);
  f << text;
  return static_cast<bool>(f);
}

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

// Runs argv, its output into `log`; its exit status, or -1. posix_spawn rather than fork: the
// engine calls the compiler from a process with threads of its own.
int run(const std::vector<std::string>& argv, const std::string& log) {
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  if (posix_spawn_file_actions_init(&actions) != 0) return -1;
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  pid_t pid = 0;
  const int spawned = ::posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) return -1;
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

Result compile(Program& p, int num_options, const char* const* options) {
  char dir_template[] = "/tmp/max_c-emulated-nvrtc-XXXXXX";
  const char* dir_made = ::mkdtemp(dir_template);
  if (!dir_made) return kInternal;
  const std::string dir = dir_made;
  std::vector<std::string> argv = {MAXC_EMULATED_CXX, MAXC_EMULATED_FLAGS, "-shared", "-I" MAXC_EMULATED_PCH_DIR,
                                   "-I" + dir, "-I" MAXC_EMULATED_TESTS_DIR};
  // The defines the kernels are configured by; the rest (architecture, float modes) are
  // NVRTC's own and mean nothing on the host.
  for (int i = 0; i < num_options; ++i)
    if (std::strncmp(options[i], "-D", 2) == 0) argv.push_back(options[i]);
  bool written = write_file(dir + "/module.cc", module_source(p));
  for (const auto& [name, text] : p.headers) written = written && write_file(dir + "/" + name, text);
  argv.insert(argv.end(), {"-o", dir + "/module.so", dir + "/module.cc"});
  const int status = written ? run(argv, dir + "/log") : -1;
  p.log = read_file(dir + "/log");
  const std::string so = status == 0 ? read_file(dir + "/module.so") : std::string();
  std::error_code ignored;
  std::filesystem::remove_all(dir, ignored);
  if (so.empty()) return kCompilation;
  // cuModuleLoadData is given no size: the image says it first (emulated_launch.h).
  const auto size = static_cast<uint64_t>(so.size());
  p.image.assign(maxc::emulated_gpu::kImageMagic, sizeof maxc::emulated_gpu::kImageMagic);
  p.image.append(reinterpret_cast<const char*>(&size), sizeof size);
  p.image += so;
  for (size_t i = 0; i < p.name_expressions.size(); ++i) p.lowered.push_back(lowered_name(i, p.name_expressions[i]));
  p.compiled = true;
  return kSuccess;
}

Program* program_of(void* handle) { return static_cast<Program*>(handle); }

}  // namespace

extern "C" {

const char* nvrtcGetErrorString(Result r) {
  switch (r) {
    case kSuccess: return "NVRTC_SUCCESS";
    case kInvalidInput: return "NVRTC_ERROR_INVALID_INPUT";
    case kInvalidProgram: return "NVRTC_ERROR_INVALID_PROGRAM";
    case kCompilation: return "NVRTC_ERROR_COMPILATION";
    case kNameExpressionNotValid: return "NVRTC_ERROR_NAME_EXPRESSION_NOT_VALID";
    default: return "NVRTC_ERROR_INTERNAL_ERROR";
  }
}

Result nvrtcVersion(int* major, int* minor) {
  *major = 0;
  *minor = 1;
  return kSuccess;
}

Result nvrtcGetNumSupportedArchs(int* count) {
  *count = 2;
  return kSuccess;
}

Result nvrtcGetSupportedArchs(int* archs) {
  archs[0] = 80;
  archs[1] = 90;
  return kSuccess;
}

Result nvrtcCreateProgram(void** program, const char* source, const char* name, int num_headers,
                          const char* const* headers, const char* const* include_names) {
  if (!program || !source) return kInvalidInput;
  auto* p = new Program;
  p->source = source;
  p->name = name ? name : "program.cu";
  for (int i = 0; i < num_headers; ++i) p->headers.emplace_back(include_names[i], headers[i]);
  *program = p;
  return kSuccess;
}

Result nvrtcDestroyProgram(void** program) {
  if (!program) return kInvalidProgram;
  delete program_of(*program);
  *program = nullptr;
  return kSuccess;
}

Result nvrtcAddNameExpression(void* program, const char* name_expression) {
  if (!program || !name_expression) return kInvalidInput;
  program_of(program)->name_expressions.emplace_back(name_expression);
  return kSuccess;
}

Result nvrtcCompileProgram(void* program, int num_options, const char* const* options) {
  if (!program) return kInvalidProgram;
  return compile(*program_of(program), num_options, options);
}

Result nvrtcGetLoweredName(void* program, const char* name_expression, const char** lowered) {
  Program* p = program_of(program);
  if (!p || !p->compiled) return kInvalidProgram;
  for (size_t i = 0; i < p->name_expressions.size(); ++i)
    if (p->name_expressions[i] == name_expression) {
      *lowered = p->lowered[i].c_str();
      return kSuccess;
    }
  return kNameExpressionNotValid;
}

Result nvrtcGetProgramLogSize(void* program, size_t* bytes) {
  *bytes = program_of(program)->log.size() + 1;
  return kSuccess;
}

Result nvrtcGetProgramLog(void* program, char* log) {
  const std::string& text = program_of(program)->log;
  std::memcpy(log, text.c_str(), text.size() + 1);
  return kSuccess;
}

Result nvrtcGetCUBINSize(void* program, size_t* bytes) {
  *bytes = program_of(program)->image.size();
  return kSuccess;
}

Result nvrtcGetCUBIN(void* program, char* image) {
  const std::string& bytes = program_of(program)->image;
  std::memcpy(image, bytes.data(), bytes.size());
  return kSuccess;
}

Result nvrtcGetPTXSize(void* program, size_t* bytes) { return nvrtcGetCUBINSize(program, bytes); }
Result nvrtcGetPTX(void* program, char* image) { return nvrtcGetCUBIN(program, image); }

}  // extern "C"
