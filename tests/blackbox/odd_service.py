#!/usr/bin/env python3
"""A service that misbehaves in one chosen way, for the black-box shell tests
(stops_test.sh, errors_test.sh). It answers OPTIONS with 200 (twice's "is
anybody there?") and each POST as its mode says; it never touches a database.

  odd_service.py PORT_FILE ok             200 "success" at once
  odd_service.py PORT_FILE status CODE    CODE at once
  odd_service.py PORT_FILE slow SECONDS   200 "success" after SECONDS
  odd_service.py PORT_FILE exit-after N   200 "success" to N POSTs, then exits
  odd_service.py PORT_FILE hang-after N   200 "success" to N POSTs, then answers none
  odd_service.py PORT_FILE die-on N       200 "success" to N - 1 POSTs; exits on the Nth, unanswered

It listens on a free loopback port and writes it to PORT_FILE, and the number
of POSTs it has taken to PORT_FILE.posts as each comes.
"""
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

port_file, mode = sys.argv[1], sys.argv[2]
arg = sys.argv[3] if len(sys.argv) > 3 else ""
posts = [0]
lock = threading.Lock()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def answer(self, status, body=b""):
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(body)
        self.wfile.flush()

    def do_OPTIONS(self):
        self.answer(200)

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        with lock:
            posts[0] += 1
            n = posts[0]
            with open(port_file + ".posts.tmp", "w") as f:
                f.write(str(n))
            os.rename(port_file + ".posts.tmp", port_file + ".posts")
        if mode == "status":
            self.answer(int(arg))
        elif mode == "slow":
            time.sleep(float(arg))
            self.answer(200, b"success")
        elif mode == "exit-after" and n > int(arg):
            os._exit(0)
        elif mode == "die-on" and n >= int(arg):
            os._exit(0)  # mid-request: the connection breaks with no answer
        elif mode == "hang-after" and n > int(arg):
            time.sleep(3600)  # until the process ends: twice gives up on the request
        else:
            self.answer(200, b"success")
        if mode == "exit-after" and n == int(arg):
            os._exit(0)

    def log_message(self, *args):
        pass


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
with open(port_file + ".tmp", "w") as f:
    f.write(str(server.server_address[1]))
os.rename(port_file + ".tmp", port_file)
server.serve_forever()
