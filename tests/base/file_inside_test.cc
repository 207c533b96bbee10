// Files beside files (base/file_inside.h): names that lead out of their folder, by '..', an
// absolute path or a symlink, are refused; the check is on the opened descriptor, and reads
// go through it, so swapping the name afterwards changes nothing.
#include "base/file_inside.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "base/error.h"

namespace maxc {
namespace {

namespace fs = std::filesystem;

class FileInsideTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::path(::testing::TempDir()) / ("max_c_file_inside_" + std::to_string(::getpid()));
    fs::remove_all(root_);
    fs::create_directories(root_ / "model" / "sub");
    write(root_ / "model" / "data.bin", "inside");
    write(root_ / "secret.bin", "outside");
  }
  void TearDown() override { fs::remove_all(root_); }

  static void write(const fs::path& p, const std::string& text) { std::ofstream(p, std::ios::binary) << text; }
  std::string dir() const { return (root_ / "model").string(); }
  FileInside open(const std::string& name) const { return open_file_inside(dir(), name, "test: location", "the folder"); }
  Code code_of(const std::string& name, std::string* message = nullptr) const {
    try {
      open(name);
    } catch (const Error& e) {
      if (message) *message = e.what();
      return e.code();
    }
    return Code::kOk;
  }
  static std::string read_all(const FileInside& f) {
    std::string s(f.size, '\0');
    read_file_range(f, 0, f.size, s.data(), "test");
    return s;
  }

  fs::path root_;
};

TEST_F(FileInsideTest, OpensAFileInsideAndReadsIt) {
  FileInside f = open("data.bin");
  EXPECT_EQ(f.size, 6u);
  EXPECT_EQ(f.path, fs::canonical(root_ / "model" / "data.bin").string());
  EXPECT_EQ(read_all(f), "inside");
}

TEST_F(FileInsideTest, RefusesNamesThatLeaveTheFolder) {
  std::string message;
  EXPECT_EQ(code_of("../secret.bin", &message), Code::kInvalidArgument);
  EXPECT_NE(message.find("test: location \"../secret.bin\" has a '..' part"), std::string::npos) << message;
  EXPECT_EQ(code_of((root_ / "secret.bin").string(), &message), Code::kInvalidArgument);
  EXPECT_NE(message.find("is absolute"), std::string::npos) << message;
  EXPECT_EQ(code_of(""), Code::kInvalidArgument);
  EXPECT_EQ(code_of(std::string("data.bin\0x", 10)), Code::kInvalidArgument);
}

TEST_F(FileInsideTest, SymlinksAreFollowedOnlyWhereTheyStayInside) {
  fs::create_symlink(root_ / "secret.bin", root_ / "model" / "escape.bin");
  fs::create_directory_symlink(root_, root_ / "model" / "up");
  fs::create_symlink("../data.bin", root_ / "model" / "sub" / "back.bin");
  std::string message;
  EXPECT_EQ(code_of("escape.bin", &message), Code::kInvalidArgument);
  EXPECT_NE(message.find("resolves outside the folder"), std::string::npos) << message;
  EXPECT_NE(message.find("secret.bin"), std::string::npos) << message;
  EXPECT_EQ(code_of("up/secret.bin"), Code::kInvalidArgument);
  EXPECT_EQ(read_all(open("sub/back.bin")), "inside");
  // The folder itself may be reached through a symlink: the check is on where it really is.
  fs::create_directory_symlink(root_ / "model", root_ / "model_link");
  EXPECT_EQ(read_all(open_file_inside((root_ / "model_link").string(), "data.bin", "test", "the folder")), "inside");
}

TEST_F(FileInsideTest, RefusesWhatIsNotARegularFileAndNamesMissingOnes) {
  ASSERT_EQ(::mkfifo((root_ / "model" / "fifo").c_str(), 0600), 0);
  EXPECT_EQ(code_of("fifo"), Code::kInvalidArgument);  // and does not block opening it
  EXPECT_EQ(code_of("sub"), Code::kInvalidArgument);
  EXPECT_EQ(code_of("missing.bin"), Code::kNotFound);
  try {
    open_file_inside((root_ / "nowhere").string(), "x", "test", "the folder");
    ADD_FAILURE() << "a missing folder opened";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::kNotFound) << e.what();
  }
}

// What was checked is what is read: a name swapped for a symlink out after the open does not
// redirect the reads, which go through the descriptor.
TEST_F(FileInsideTest, ReadsGoThroughTheCheckedDescriptor) {
  FileInside f = open("data.bin");
  fs::remove(root_ / "model" / "data.bin");
  fs::create_symlink(root_ / "secret.bin", root_ / "model" / "data.bin");
  EXPECT_EQ(read_all(f), "inside");
  EXPECT_EQ(code_of("data.bin"), Code::kInvalidArgument);
}

TEST_F(FileInsideTest, AFileThatShrankIsDataLossNamingIt) {
  FileInside f = open("data.bin");
  ASSERT_EQ(::truncate((root_ / "model" / "data.bin").c_str(), 2), 0);
  char buf[6];
  try {
    read_file_range(f, 0, 6, buf, "test");
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::kDataLoss);
    EXPECT_NE(std::string(e.what()).find("data.bin"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace maxc
