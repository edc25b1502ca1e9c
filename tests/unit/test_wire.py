"""The one wire protocol (compiler/boot/wire.py): what is written is read back whole, on a stream
and in a datagram with file descriptors beside it; a stream or datagram that ends before or inside
a message says so (wire.Closed, an EOFError), never an unpickling error or a silent None."""
import io
import os
import socket
import threading

import pytest
import torch
import torch.fx

from compiler.boot import wire


class Twice(torch.nn.Module):
    def forward(self, x):
        return torch.relu(x) * 2


def test_messages_written_one_after_another_are_read_back_whole_and_in_order():
    module = torch.fx.symbolic_trace(Twice())
    sent = [{"op": "warmup"}, {"status": "ok", "seconds": 0.25, "tensor": torch.arange(6.0).reshape(2, 3)},
            {"script": "/tmp/repro.py", "args": ["--x", "é"]}, module, None]
    stream = io.BytesIO()
    for message in sent:
        wire.write_message(stream, message)
    stream.seek(0)
    got = [wire.read_message(stream) for _ in sent]
    assert got[0] == sent[0] and got[2] == sent[2] and got[4] is None
    assert torch.equal(got[1]["tensor"], sent[1]["tensor"]) and got[1]["seconds"] == 0.25
    x = torch.randn(4)
    assert torch.equal(got[3](x), module(x))
    with pytest.raises(wire.Closed) as ended:
        wire.read_message(stream)
    assert not ended.value.partial


def test_a_pipe_delivers_a_message_larger_than_one_read_returns():
    read_end, write_end = os.pipe()
    message = {"blob": bytes(range(256)) * 4096}  # 1 MiB: more than a pipe holds, read in pieces
    with os.fdopen(read_end, "rb", buffering=0) as reader, os.fdopen(write_end, "wb") as writer:
        writing = threading.Thread(target=wire.write_message, args=(writer, message))
        writing.start()
        assert wire.read_message(reader) == message
        writing.join()


@pytest.mark.parametrize("cut", [3, wire.HEADER.size + 5])
def test_a_stream_closed_inside_a_message_is_a_clear_eof(cut):
    frame = wire.encode({"status": "ok", "payload": "x" * 100})
    with pytest.raises(EOFError, match="the stream closed .* bytes into a") as ended:
        wire.read_message(io.BytesIO(frame[:cut]))
    assert isinstance(ended.value, wire.Closed) and ended.value.partial


def test_a_closed_pipe_before_any_message_is_a_clean_eof():
    read_end, write_end = os.pipe()
    os.close(write_end)
    with os.fdopen(read_end, "rb") as reader, pytest.raises(wire.Closed, match="before a message") as ended:
        wire.read_message(reader)
    assert not ended.value.partial


def test_a_datagram_carries_one_message_and_file_descriptors():
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    read_end, write_end = os.pipe()
    with ours, theirs:
        socket.send_fds(ours, [wire.encode({"kind": "script", "id": 3})], [write_end])
        data, fds, _, _ = socket.recv_fds(theirs, wire.DATAGRAM, 3)
        assert wire.decode(data) == {"kind": "script", "id": 3} and len(fds) == 1
        os.write(fds[0], b"through the passed descriptor")
        assert os.read(read_end, 100) == b"through the passed descriptor"
    for fd in (read_end, write_end, *fds):
        os.close(fd)


def test_a_datagram_cut_by_a_small_read_is_a_clear_eof_not_an_unpickling_error():
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    with ours, theirs:
        ours.send(wire.encode({"args": ["y" * 1000]}))
        cut = theirs.recv(200)  # a SOCK_SEQPACKET read drops what does not fit
        with pytest.raises(wire.Closed, match="bytes of a .*-byte message") as ended:
            wire.decode(cut)
        assert ended.value.partial
