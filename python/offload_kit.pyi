"""offload-kit: LLVM's offload containers (clang-offload-bundler bundles,
compressed bundles CCOB v1-v3, offload binaries, device archives, ELF and
COFF hosts) read, checked and written by the reference implementation.

Every failure raises OffloadKitError with the spec rule and byte offset.
"""

import os
from typing import Iterator, Literal, Optional, Sequence, Tuple, Union, overload

Source = Union[str, "os.PathLike[str]", bytes, bytearray, memoryview]

__version__: str

class OffloadKitError(Exception):
    """A spec violation or a request that cannot be carried out."""

    rule: Optional[str]
    """The spec rule ID (e.g. ``"BIN-5"``), None for errors outside the spec."""
    offset: Optional[int]
    """The absolute byte offset, None when the error has no position."""
    message: str
    """What is wrong, without offset and rule."""
    errors: list["Violation"]
    """Every violation (``open`` on a nonconforming file); may be absent."""

class Violation:
    """One violation of spec/: rule, absolute offset, message."""

    rule: Optional[str]
    offset: Optional[int]
    message: str

class Entry:
    """One entry of a container."""

    id: str
    """The bundle entry ID; an offload-binary image: ``<producer>-<triple>-<arch>``."""
    offset: int
    """Absolute offset of the payload; within the decompressed bundle when ``compressed_at`` is set."""
    size: int
    bundle: int
    """Which bundle of the file holds it, from 0."""
    member: Optional[str]
    """The archive member holding it (an untrusted name, never a path)."""
    member_index: Optional[int]
    section: Optional[str]
    compressed_at: Optional[int]
    """Absolute offset of the compressed bundle holding it."""
    arch: Optional[str]
    """A kpack entry's architecture (a kpack archive's code object, or a split host's in one)."""
    archive: Optional[str]
    """For a split host's code object: the kpack archive holding it, as found; ``offset`` and ``size`` are that archive's."""
    index: int
    """Position in ``Container.entries``."""

class Container:
    """An opened container; the file is mapped, payloads are read on demand."""

    @property
    def kind(self) -> str:
        """``binary-bundle``, ``text-bundle``, ``ccob``, ``elf``, ``archive``, ``offload-binary``, ``coff``, ``kpack``, ..."""
    @property
    def path(self) -> Optional[str]: ...
    @property
    def entries(self) -> list[Entry]: ...
    def read(self, entry: Union[Entry, str]) -> bytes:
        """The bytes of an entry (or of the one entry with this ID)."""
    def __len__(self) -> int: ...
    def __getitem__(self, i: int) -> Entry: ...
    def __iter__(self) -> Iterator[Entry]: ...

def open(
    source: Source, llvm_version: Optional[int] = None, max_memory: Optional[int] = None, kpack_path: Optional[str] = None
) -> Container:
    """Open a container strictly (spec/), or as LLVM ``llvm_version`` reads it (a release offload-kit models; others are refused with the list).

    A kpack archive lists its code objects (``kind`` ``kpack``); a split host (HIPK,
    given by its path) its own entries, then the code objects its archives file
    under its keys (found through its search paths, or ``kpack_path``, else
    ``ROCM_KPACK_PATH``; each ``Entry.archive`` names its archive), as
    ``offload-kit list`` lists them; given as bytes, its own entries only.

    A path that cannot be opened raises ``OSError`` (``FileNotFoundError``, ...);
    a file cut short by another process while open makes later reads raise ``OSError``.
    Listing and every later ``read`` hold at most ``max_memory`` bytes of decoded data
    (default: ``max_memory()``); past it, CLI-6."""

def validate(source: Source, llvm_version: Optional[int] = None, max_memory: Optional[int] = None) -> list[Violation]:
    """Every violation of spec/ (empty: the file conforms), within ``max_memory`` (default: ``max_memory()``)."""

def inspect_file(
    source: Source, strict: bool = False, kpack_path: Optional[str] = None, max_memory: Optional[int] = None
) -> dict:
    """``offload-kit inspect --json``'s report for one file (schema offload-kit-inspect/1).

    What clang 14-16 wrote (rules ID-5, BIN-10) is read with ``warnings``
    unless ``strict``. A kpack archive gives ``{"kpack_archive": ...}``; a
    split host (HIPK, given by its path) ``{"report": ..., "kpack_host":
    ...}``, the code objects its archives file under its keys, found
    through its search paths or ``kpack_path`` (else ``ROCM_KPACK_PATH``)."""

def check(
    source: Source,
    gpu: Union[str, Sequence[str]],
    strict: bool = False,
    kpack_path: Optional[str] = None,
    max_memory: Optional[int] = None,
) -> list[dict]:
    """Per GPU: which code object the HIP runtime would load (``check --json``'s verdicts).

    What clang 14-16 wrote (rules ID-5, BIN-10) is read unless ``strict``.
    A split host (HIPK, given by its path) is followed into the kpack
    archives its search paths name, or those of ``kpack_path``
    (``:``-separated, as ``--kpack-path``; else ``ROCM_KPACK_PATH``)."""

def bundle(
    entries: Sequence[Tuple[str, bytes]],
    type: str = "o",
    align: int = 1,
    compress: bool = False,
    format_version: Optional[int] = None,
    level: Optional[int] = None,
    llvm_version: int = 22,
    max_memory: Optional[int] = None,
) -> bytes:
    """Bundle ``(target, payload)`` pairs as clang-offload-bundler ``-type=TYPE`` of that release writes them (24: LLVM main).

    The defaults are the bundler's (``-bundle-align=1``, uncompressed); ``compress=True`` is ``-compress``
    (CCOB ``format_version``: the release's default, 3 for LLVM 22; zstd ``level``, default 3)."""

def unbundle(
    source: Source,
    targets: Sequence[str],
    type: str = "o",
    allow_missing: bool = False,
    llvm_version: int = 22,
    max_memory: Optional[int] = None,
) -> list[Optional[bytes]]:
    """What ``clang-offload-bundler -unbundle -type=TYPE -targets=...`` of that release (24: LLVM main) writes for each target.

    Per target its output's bytes, or None where the release writes no file for it
    (a target it spells like a later one); the release's checks, decompression and
    errors (``.llvm_message``), the drop-in's bytes. ``-type=a`` is refused (an
    archive unbundles into archives). The outputs together hold at most
    ``max_memory`` bytes."""

def split_kpack(
    source: Source,
    name: Optional[str] = None,
    kernel_name: Optional[str] = None,
    prefix: Optional[str] = None,
    level: Optional[int] = None,
    max_memory: Optional[int] = None,
) -> dict[str, bytes]:
    """The files of a ROCm kpack split of a fat binary, as ``offload-kit convert --to kpack`` writes them.

    ``{file name: bytes}``: one archive per target ID (``<prefix>_<target ID>.kpack``,
    each code object under ``<kernel_name>#<index>``) and, for a HIP shared object,
    the host rewritten to find them (HIPK-3). ``name`` is the input's file name (a
    path's own, else ``a.out``): the default kernel name and, up to its first ``.``,
    the default prefix. Code objects are stored plain, or as zstd frames of ``level``
    (1-22). The files together hold at most ``max_memory`` bytes."""

def join_kpack(source: Source, kpack_path: Optional[str] = None, max_memory: Optional[int] = None) -> bytes:
    """A split made whole, as ``offload-kit convert --to bundle`` writes it.

    A kpack archive becomes one binary bundle of its code objects; a split host
    (HIPK, given by its path) gets a bundle per wrapper from the archives its
    search paths name, or those of ``kpack_path`` (``:``-separated; else
    ``ROCM_KPACK_PATH``)."""

def compress(data: bytes, version: int = 3, method: Literal["zstd", "zlib"] = "zstd", level: Optional[int] = None) -> bytes:
    """A compressed bundle (CCOB); the defaults give LLVM 22's bytes."""

def decompress(data: bytes, max_memory: Optional[int] = None) -> bytes:
    """The bundle a CCOB holds, sizes and hash verified; larger than ``max_memory`` (default: ``max_memory()``): CLI-6."""

def max_memory() -> int:
    """The budget of a call given no ``max_memory=``: ``OFFLOAD_KIT_MAX_MEMORY`` as it is now, else 256 MiB.

    A variable that is not a size raises ``ValueError`` (here and in every call that reads), as the CLI refuses it."""

def generate(
    kind: str,
    seed: int = 0,
    malformed: Optional[str] = None,
    max_size: int = 1 << 20,
    target_ids: Optional[Sequence[str]] = None,
    payloads: Optional[Union[str, "os.PathLike[str]"]] = None,
    random_payloads: bool = False,
    llvm_version: Optional[int] = None,
    max_memory: Optional[int] = None,
) -> Tuple[bytes, dict]:
    """A generated container (valid, or breaking rule ``malformed``) and its description.

    ``llvm_version`` (13-23, 24 for LLVM main) makes only what that release's readers take:
    offload binaries of version 1, compressed bundles of the versions it reads.

    Entries carry images loaders accept for their targets; ``payloads`` (a
    directory of the user's images) or ``random_payloads=True`` change that.
    The dict's ``companions`` maps file names to the bytes of files that go
    beside this one (``kind="kpack"``: the host's archives)."""
