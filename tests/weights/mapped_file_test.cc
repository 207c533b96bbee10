// Mapping weights files read-only, and the I/O errors of doing so.
#include "weights/mapped_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include "base/guarded_mapping.h"
#include "test_util.h"

namespace maxc::testing {
namespace {

TEST(MappedFile, MapsTheWholeFile) {
  ScratchDir dir;
  const std::vector<uint8_t> bytes = pattern(5000, 3);
  write_bytes(dir.path("a.bin"), bytes);
  auto f = MappedFile::open(dir.path("a.bin"));
  EXPECT_EQ(f->path(), dir.path("a.bin"));
  ASSERT_EQ(f->size(), bytes.size());
  EXPECT_EQ(std::memcmp(f->data(), bytes.data(), bytes.size()), 0);
  EXPECT_TRUE(f->contains(f->data() + 10, 4990));
  EXPECT_FALSE(f->contains(f->data() + 10, 4991));
  EXPECT_FALSE(f->contains(bytes.data(), 1));
}

TEST(MappedFile, EmptyFileMapsToNothing) {
  ScratchDir dir;
  write_bytes(dir.path("empty"), {});
  auto f = MappedFile::open(dir.path("empty"));
  EXPECT_EQ(f->size(), 0u);
  EXPECT_TRUE(f->bytes().empty());
}

TEST(MappedFile, Errors) {
  ScratchDir dir;
  EXPECT_MAXC_ERROR(MappedFile::open(dir.path("missing.gguf")), Code::kNotFound, "missing.gguf",
                    "No such file or directory");
  EXPECT_MAXC_ERROR(MappedFile::open(dir.path("missing/x.gguf")), Code::kNotFound, "missing/x.gguf");
  EXPECT_MAXC_ERROR(MappedFile::open(dir.dir()), Code::kInvalidArgument, dir.dir().c_str(), "directory");
  ASSERT_EQ(::mkfifo(dir.path("fifo").c_str(), 0600), 0);
  EXPECT_MAXC_ERROR(MappedFile::open(dir.path("fifo")), Code::kInvalidArgument, "fifo", "not a regular file");
  write_bytes(dir.path("secret"), {1, 2, 3});
  ASSERT_EQ(::chmod(dir.path("secret").c_str(), 0), 0);
  if (::geteuid() != 0) {  // root reads anything
    EXPECT_MAXC_ERROR(MappedFile::open(dir.path("secret")), Code::kPermissionDenied, "secret", "Permission denied");
  }
}

// A file truncated under its mapping: reading past its new end would be SIGBUS, which ends the
// process; the guard (base/guarded_mapping.h) turns those pages into zeros and marks the file.
TEST(MappedFile, AFileThatShrinksUnderItsMappingReadsAsZerosAndIsMarkedDamaged) {
  ScratchDir dir;
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  const std::vector<uint8_t> bytes = pattern(3 * page + 100, 5);
  write_bytes(dir.path("shrinks.bin"), bytes);
  auto f = MappedFile::open(dir.path("shrinks.bin"));
  auto other = MappedFile::open(dir.path("shrinks.bin"));  // a second mapping, read before
  EXPECT_EQ(f->data()[2 * page], bytes[2 * page]);
  EXPECT_FALSE(f->damaged());
  EXPECT_EQ(mapping_damage_error(f->data(), f->size()), "");
  ASSERT_EQ(::truncate(dir.path("shrinks.bin").c_str(), static_cast<off_t>(page)), 0);
  EXPECT_EQ(f->data()[10], bytes[10]);  // the first page is still in the file
  uint64_t sum = 0;
  for (size_t i = page; i < f->size(); ++i) sum += f->data()[i];  // faults; the process lives
  EXPECT_EQ(sum, 0u);
  EXPECT_TRUE(f->damaged());
  EXPECT_FALSE(other->damaged());  // not read past the end: not (yet) damaged
  const std::string error = mapping_damage_error(f->data() + page, 1);
  EXPECT_NE(error.find("shrinks.bin"), std::string::npos) << error;
  EXPECT_NE(error.find("shorter than when it was mapped"), std::string::npos) << error;
  EXPECT_EQ(mapping_damage_error(other->data(), other->size()), "");
  EXPECT_GE(mapping_fault_count(), 1u);
}

TEST(MappedFile, FromBytesOwnsItsCopy) {
  auto f = MappedFile::from_bytes("label", {1, 2, 3});
  EXPECT_EQ(f->path(), "label");
  ASSERT_EQ(f->size(), 3u);
  EXPECT_EQ(f->data()[2], 3);
  EXPECT_EQ(MappedFile::from_bytes("e", {})->size(), 0u);
}

}  // namespace
}  // namespace maxc::testing
