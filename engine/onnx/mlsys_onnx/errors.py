"""The one error type of the importer."""


class OnnxImportError(ValueError):
    """The model cannot be imported: a bad file, an unbound symbolic dim, an unsupported node.

    The message is meant for the user as it is (the CLI prints it after 'mlsys-onnx: error: ').
    """


# The name the first drafts of the interface used.
ImportError_ = OnnxImportError


class Unsupported(Exception):
    """Raised by a lowering rule for a node it cannot place; the driver turns it into an
    OnnxImportError naming the node, or bridges the node with --skip-unsupported."""
