"""The one wire protocol between minify's processes: how one message is encoded and framed.

A message is a pickle behind an 8-byte little-endian length: `encode` makes that frame, `decode`
reads one back. Streams (a worker's pipes, the pre-started repro runner's stdin) carry frames one
after another (`write_message`, `read_message`); the zygote's SOCK_SEQPACKET socket carries one
frame per datagram, with file descriptors beside it (socket.send_fds), so `encode`/`decode` suffice.

Why pickle: workers' jobs and answers carry tensors, GraphModules and dataclasses, which only pickle
moves whole, and one encoding for every channel beats two; the small JSON-shaped messages (the
zygote's requests and answers, a repro job) cost nothing more as pickles. Both ends are minify's own
processes on one machine, on a pipe or socket pair made by the parent: no stranger writes to them.
Why a length: a reader knows where a message ends without scanning it, and a frame cut short (a
writer killed mid-message, a datagram larger than the reader's buffer) is told apart from a whole
one: `Closed`, an EOFError that says how far it got, rather than an unpickling error.

Stray prints never reach a channel: a worker moves its stdout to its log before it answers
(minifier/workers/worker.py); the repro runner gets its one job on stdin, and everything the repro
prints on stdout and stderr is the repro's output, read whole after it ends (repro/verify.py).

Standard library only, and no import of minify's: boot files load it by path (`load_wire` in
compiler/boot/zygote.py and prewarmed_repro.py), the rest as compiler.boot.wire.
"""
import pickle
import struct

HEADER = struct.Struct("<Q")  # the pickle's length in bytes
DATAGRAM = 1 << 16  # the largest datagram a reader of the zygote's socket takes


class Closed(EOFError):
    """The stream ended before a message (`partial` False: the writer is gone, between messages)
    or partway through one (`partial` True: the writer died mid-message, or a datagram was cut)."""

    def __init__(self, text: str, partial: bool):
        super().__init__(text)
        self.partial = partial


def encode(message) -> bytes:
    """One message as one frame: its pickle's length, then the pickle."""
    data = pickle.dumps(message)
    return HEADER.pack(len(data)) + data


def decode(frame: bytes):
    """The message of one whole frame (a datagram); Closed if the frame is not whole."""
    if len(frame) < HEADER.size:
        raise Closed(f"a frame of {len(frame)} bytes is shorter than its {HEADER.size}-byte header", bool(frame))
    (size,) = HEADER.unpack_from(frame)
    if len(frame) - HEADER.size != size:
        raise Closed(f"a frame holds {len(frame) - HEADER.size} bytes of a {size}-byte message", True)
    return pickle.loads(memoryview(frame)[HEADER.size:])


def write_message(stream, message) -> None:
    """One frame on a binary stream, flushed: the reader waits for it."""
    stream.write(encode(message))
    stream.flush()


def read_message(stream):
    """The next message of a binary stream; Closed if the stream ends before or inside one."""
    header = _read(stream, HEADER.size)
    if len(header) < HEADER.size:
        if not header:
            raise Closed("the stream closed before a message", False)
        raise Closed(f"the stream closed {len(header)} bytes into a {HEADER.size}-byte header", True)
    (size,) = HEADER.unpack(header)
    data = _read(stream, size)
    if len(data) < size:
        raise Closed(f"the stream closed {len(data)} bytes into a {size}-byte message", True)
    return pickle.loads(data)


def _read(stream, size: int) -> bytes:
    """`size` bytes, or fewer only where the stream ends (an unbuffered read may return less)."""
    chunks, got = [], 0
    while got < size:
        chunk = stream.read(size - got)
        if not chunk:
            break
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)
