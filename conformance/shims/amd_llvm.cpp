// amd-llvm-shim: AMD's own LLVM builds (the ROCm Python wheels' shared
// libraries) measured by the conformance runner through their
// llvm/Object/OffloadBundle.h and OffloadBinary.h API.
//
// Build (tools/setup-amd-llvm does this):
//   c++ -std=c++17 -O1 -DAMD_LLVM=22 -I/usr/lib/llvm-22/include
//       conformance/shims/amd_llvm.cpp -o target/amd-llvm-22/shim
//       -Ltarget/amd-llvm-22 -l:librocmllvm.so -Wl,-rpath,'$ORIGIN'
//   AMD_LLVM=22: rocm-llvm-python 7.2.2 (librocmllvm.so, AMD LLVM 22.0.0git)
//   AMD_LLVM=23: rocm-bindings-compiler 10.0 (libLLVM.so, AMD LLVM 23.0.0git)
//
// Usage (exit 0: success; 1: the library's error, printed on stderr;
// 2: usage or I/O error of this program):
//   shim locate FILE
//       ObjectFile::createObjectFile(FILE), then
//       extractOffloadBundleFatBinary(): one line per entry of every bundle
//       found, "ID<TAB>OFFSET<TAB>SIZE" (what llvm-readobj --offloading prints
//       as a URI).
//   shim decompress IN OUT
//       CompressedOffloadBundle::decompress(IN), written to OUT.
//   shim objdump-offloading FILE
//       createBinary(FILE's bytes), then extractOffloadBinaries(FILE's bytes)
//       (what llvm-objdump --offloading calls): one line per OffloadBinary
//       found.
//   shim extract-uri URI OUT
//       extractOffloadBundleByURI(URI); the library writes
//       <path>-offset<N>-size<M>.co next to the file the URI names; the shim
//       moves the file it created to OUT.
//
// ABI. Both libraries are built without LLVM's ABI-breaking checks (they
// define llvm::DisableABIBreakingChecks), as Debian's llvm-22-dev headers
// are (LLVM_ENABLE_ABI_BREAKING_CHECKS 0): Error, Expected<T>, StringRef,
// SmallVector, MemoryBuffer, ObjectFile and Binary come from those headers.
// OffloadBundle.h and OffloadBinary.h are NOT included: the AMD builds'
// declarations are written below, checked against the libraries' code:
//  - OffloadBundleFatBin is 0x78 bytes in both (operator new(0x78) in
//    OffloadBundleFatBin::create); AMD 22 puts `Entries` at 0x20 and
//    `Decompressed` at 0x68 (ROCm's amd-staging order), AMD 23 puts
//    `Decompressed` at 0x20 and `Entries` at 0x28 (upstream's order);
//    DecompressedBuffer at 0x70 in both.
//  - OffloadBundleEntry is 0x38 bytes: three uint64_t and a std::string
//    (the stride of the entry destructor loop in create).
//  - OffloadFile is 16 bytes, two owning pointers deleted through their
//    virtual destructors (SmallVectorTemplateBase<OffloadFile>::
//    moveElementsForGrow in both): OwningBinary<OffloadBinary>. The shim
//    never reads an OffloadBinary's fields, whose layout differs (23 has
//    multi-entry binaries).
//  - CompressedOffloadBundle::decompress takes `bool Verbose` in AMD 22 and
//    `raw_ostream *VerboseStream` in AMD 23 (the exported symbols).
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Object/Binary.h"
#include "llvm/Object/ObjectFile.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <dirent.h>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <sys/stat.h>

#ifndef AMD_LLVM
#error "define AMD_LLVM=22 or AMD_LLVM=23"
#endif

namespace llvm {
namespace object {

class CompressedOffloadBundle {
public:
#if AMD_LLVM == 22
  static Expected<std::unique_ptr<MemoryBuffer>>
  decompress(const MemoryBuffer &Input, bool Verbose);
#else
  static Expected<std::unique_ptr<MemoryBuffer>>
  decompress(const MemoryBuffer &Input, raw_ostream *VerboseStream);
#endif
};

struct OffloadBundleEntry {
  uint64_t Offset = 0u;
  uint64_t Size = 0u;
  uint64_t IDLength = 0u;
  std::string ID;
};
static_assert(sizeof(OffloadBundleEntry) == 0x38, "OffloadBundleEntry");

class OffloadBundleFatBin {
public:
  uint64_t Size = 0u;
  StringRef FileName;
  uint64_t NumberOfEntries = 0;
#if AMD_LLVM == 22
  SmallVector<OffloadBundleEntry> Entries;
  bool Decompressed = false;
#else
  bool Decompressed = false;
  SmallVector<OffloadBundleEntry> Entries;
#endif
  std::unique_ptr<MemoryBuffer> DecompressedBuffer;

  OffloadBundleFatBin() = default;
  OffloadBundleFatBin(OffloadBundleFatBin &&) = default;
};
static_assert(sizeof(OffloadBundleFatBin) == 0x78, "OffloadBundleFatBin");
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Winvalid-offsetof"
#if AMD_LLVM == 22
static_assert(offsetof(OffloadBundleFatBin, Entries) == 0x20, "Entries");
static_assert(offsetof(OffloadBundleFatBin, Decompressed) == 0x68, "flag");
#else
static_assert(offsetof(OffloadBundleFatBin, Decompressed) == 0x20, "flag");
static_assert(offsetof(OffloadBundleFatBin, Entries) == 0x28, "Entries");
#endif
static_assert(offsetof(OffloadBundleFatBin, DecompressedBuffer) == 0x70, "buf");
#pragma GCC diagnostic pop

Error extractOffloadBundleFatBinary(
    const ObjectFile &Obj, SmallVectorImpl<OffloadBundleFatBin> &Bundles);
Error extractOffloadBundleByURI(StringRef URIstr);

// OwningBinary<OffloadBinary>: the binary, then the buffer it may own.
class OffloadBinary;
class OffloadFile {
public:
  Binary *Bin = nullptr; // an OffloadBinary (single base class, offset 0)
  MemoryBuffer *Buf = nullptr;
  OffloadFile() = default;
  OffloadFile(OffloadFile &&O) : Bin(O.Bin), Buf(O.Buf) {
    O.Bin = nullptr;
    O.Buf = nullptr;
  }
  ~OffloadFile() {
    delete Buf;
    delete Bin;
  }
};
static_assert(sizeof(OffloadFile) == 16, "OffloadFile");
Error extractOffloadBinaries(MemoryBufferRef Buffer,
                             SmallVectorImpl<OffloadFile> &Binaries);

} // namespace object
} // namespace llvm

using namespace llvm;
using namespace llvm::object;

static int libraryError(Error E) {
  std::string M = toString(std::move(E));
  std::fprintf(stderr, "error: %s\n", M.c_str());
  return 1;
}

static bool readFile(const char *Path, std::string &Out) {
  std::ifstream In(Path, std::ios::binary);
  if (!In) {
    std::fprintf(stderr, "amd-llvm-shim: cannot read %s: %s\n", Path,
                 std::strerror(errno));
    return false;
  }
  Out.assign(std::istreambuf_iterator<char>(In), {});
  return true;
}

static bool writeFile(const char *Path, StringRef Data) {
  std::ofstream Out(Path, std::ios::binary | std::ios::trunc);
  if (!Out || !Out.write(Data.data(), Data.size())) {
    std::fprintf(stderr, "amd-llvm-shim: cannot write %s: %s\n", Path,
                 std::strerror(errno));
    return false;
  }
  return true;
}

static int locate(const char *Path) {
  Expected<OwningBinary<ObjectFile>> ObjOrErr =
      ObjectFile::createObjectFile(Path);
  if (!ObjOrErr)
    return libraryError(ObjOrErr.takeError());
  SmallVector<OffloadBundleFatBin> Bundles;
  if (Error E = extractOffloadBundleFatBinary(*ObjOrErr->getBinary(), Bundles))
    return libraryError(std::move(E));
  for (OffloadBundleFatBin &B : Bundles)
    for (OffloadBundleEntry &E : B.Entries)
      std::printf("%s\t%llu\t%llu\n", E.ID.c_str(),
                  (unsigned long long)E.Offset, (unsigned long long)E.Size);
  return 0;
}

static int decompress(const char *In, const char *Out) {
  std::string Bytes;
  if (!readFile(In, Bytes))
    return 2;
  std::unique_ptr<MemoryBuffer> Input =
      MemoryBuffer::getMemBufferCopy(Bytes, In);
#if AMD_LLVM == 22
  auto OutOrErr = CompressedOffloadBundle::decompress(*Input, false);
#else
  auto OutOrErr = CompressedOffloadBundle::decompress(*Input, nullptr);
#endif
  if (!OutOrErr)
    return libraryError(OutOrErr.takeError());
  return writeFile(Out, (*OutOrErr)->getBuffer()) ? 0 : 2;
}

static int objdumpOffloading(const char *Path) {
  std::string Bytes;
  if (!readFile(Path, Bytes))
    return 2;
  std::unique_ptr<MemoryBuffer> Input =
      MemoryBuffer::getMemBufferCopy(Bytes, Path);
  // llvm-objdump first opens its input with createBinary (an object file,
  // an archive or an OffloadBinary) and refuses what that refuses; every
  // kind then ends in extractOffloadBinaries over the input's bytes.
  {
    Expected<std::unique_ptr<Binary>> BinOrErr =
        createBinary(Input->getMemBufferRef(), nullptr);
    if (!BinOrErr)
      return libraryError(BinOrErr.takeError());
  }
  SmallVector<OffloadFile> Binaries;
  if (Error E = extractOffloadBinaries(Input->getMemBufferRef(), Binaries))
    return libraryError(std::move(E));
  size_t I = 0;
  for (OffloadFile &F : Binaries)
    std::printf("OFFLOADING IMAGE [%zu]: %zu bytes\n", I++,
                F.Bin ? F.Bin->getData().size() : size_t(0));
  return 0;
}

static std::set<std::string> listDir(const std::string &Dir) {
  std::set<std::string> Names;
  if (DIR *D = opendir(Dir.c_str())) {
    while (struct dirent *E = readdir(D))
      Names.insert(E->d_name);
    closedir(D);
  }
  return Names;
}

static int extractUri(const char *Uri, const char *Out) {
  // The directory the library will write into: that of the URI's path
  // (as the library reads it: up to '#' or '?', not percent-decoded).
  StringRef U(Uri);
  U.consume_front("file://");
  StringRef P = U.take_until([](char C) { return C == '#' || C == '?'; });
  size_t Slash = P.rfind('/');
  std::string Dir = Slash == StringRef::npos ? "." : P.substr(0, Slash).str();
  if (Dir.empty())
    Dir = "/";
  std::set<std::string> Before = listDir(Dir);
  if (Error E = extractOffloadBundleByURI(Uri))
    return libraryError(std::move(E));
  std::set<std::string> After = listDir(Dir);
  std::string Made;
  for (const std::string &N : After)
    if (!Before.count(N)) {
      if (!Made.empty()) {
        std::fprintf(stderr,
                     "amd-llvm-shim: the library created several files in %s\n",
                     Dir.c_str());
        return 2;
      }
      Made = Dir + "/" + N;
    }
  if (Made.empty()) {
    std::fprintf(stderr,
                 "amd-llvm-shim: the library reported success but created no "
                 "file in %s\n",
                 Dir.c_str());
    return 2;
  }
  if (std::rename(Made.c_str(), Out) != 0) {
    std::fprintf(stderr, "amd-llvm-shim: cannot move %s to %s: %s\n",
                 Made.c_str(), Out, std::strerror(errno));
    return 2;
  }
  return 0;
}

int main(int argc, char **argv) {
  if (argc == 3 && !std::strcmp(argv[1], "locate"))
    return locate(argv[2]);
  if (argc == 4 && !std::strcmp(argv[1], "decompress"))
    return decompress(argv[2], argv[3]);
  if (argc == 3 && !std::strcmp(argv[1], "objdump-offloading"))
    return objdumpOffloading(argv[2]);
  if (argc == 4 && !std::strcmp(argv[1], "extract-uri"))
    return extractUri(argv[2], argv[3]);
  std::fprintf(stderr,
               "usage: %s locate FILE | decompress IN OUT | "
               "objdump-offloading FILE | extract-uri URI OUT\n",
               argv[0]);
  return 2;
}
