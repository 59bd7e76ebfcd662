#!/usr/bin/python3
"""A broker worker in Python (python3-zmq, python3-msgpack): proof that the protocol is
language-neutral. Registers for SERVICE, answers N leases with the payload reversed, then
says goodbye.

    py_worker.py ENDPOINT SERVICE N WIRE_VERSION

Message type ids and the envelope come from docs/wire-schema.md: REGISTER 10, HEARTBEAT 11,
LEASE 14, ACK 15, DISCONNECT 17. Exit 3 when a module is missing (the C test skips).
"""
import os
import socket
import sys

try:
    import msgpack
    import zmq
except ImportError:
    sys.exit(3)

MAGIC = 0x50565731
endpoint, service, n, version = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])


def envelope(msg_type, body):
    return msgpack.packb({"pv": MAGIC, "ver": version, "type": msg_type, "body": body},
                         use_bin_type=True)


ctx = zmq.Context()
s = ctx.socket(zmq.DEALER)
s.setsockopt(zmq.LINGER, 500)
s.connect(endpoint)
s.send(envelope(10, {"service": service, "capacity": 1, "role": "python",
                     "host": socket.gethostname(), "pid": os.getpid(),
                     "worker_id": "py-worker"}))
done = 0
while done < n:
    if not s.poll(5000):
        sys.exit("no lease within 5 s")
    m = msgpack.unpackb(s.recv(), raw=False)
    if m["type"] == 11:  # heartbeat: answer in kind so the broker keeps us
        s.send(envelope(11, {"credits": 1, "in_flight": 0}))
    elif m["type"] == 14:
        lease = m["body"]
        s.send(envelope(15, {"job_id": lease["job_id"], "ok": True, "error": "",
                             "reply": bytes(lease["payload"][::-1])}))
        done += 1
s.send(envelope(17, {"reason": "python worker done"}))
s.close()
ctx.term()
