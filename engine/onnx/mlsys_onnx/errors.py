"""The one error type of the importer, and how messages show names."""
import stat


class OnnxImportError(ValueError):
    """The model cannot be imported: a bad file, an unbound symbolic dim, an unsupported node.

    The message is meant for the user as it is (the CLI prints it after 'mlsys-onnx: error: ').
    """


# The name the first drafts of the interface used.
ImportError_ = OnnxImportError


class Unsupported(Exception):
    """Raised by a lowering rule for a node it cannot place; the driver turns it into an
    OnnxImportError naming the node, or bridges the node with --skip-unsupported."""


def show(name, limit=200):
    """name fit for a one-line message (as the C++ side's printable()): bytes decoded with
    U+FFFD for invalid UTF-8, control characters as \\xNN, cut after `limit` bytes with the full
    size named."""
    if isinstance(name, (bytes, bytearray)):
        name = bytes(name).decode("utf-8", errors="replace")
    name = str(name)
    try:
        raw = name.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates: a file name's undecodable bytes (os.fsdecode)
        try:
            raw = name.encode("utf-8", errors="surrogateescape")
        except UnicodeEncodeError:
            raw = name.encode("utf-8", errors="replace")
        name = raw.decode("utf-8", errors="replace")
        raw = name.encode("utf-8")
    text = raw[:limit].decode("utf-8", errors="ignore") if len(raw) > limit else name
    out = "".join(f"\\x{ord(c):02x}" if ord(c) < 0x20 or ord(c) == 0x7f else c for c in text)
    return out + (f"... ({len(raw)} bytes in all)" if len(raw) > limit else "")


def node_label(name, index, op_type):
    """How messages name an ONNX node: node 'NAME' (#INDEX, op TYPE)."""
    return f"node '{show(name)}' (#{index}, op {show(op_type, 64)})"


def file_kind(mode):
    """What a file that is not a regular file is, from its st_mode."""
    for test, what in ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return what
    return "not a regular file"
