#!/usr/bin/env python3
"""A demo shop's payment-callback service, in Python with Flask, for twice's
black-box mode (docs/black-box.md). It credits a user's account when the
gateway says an order was paid, in two variants:

  --variant buggy   check-then-act: read the order, and if it is still
                    waiting, mark it paid and credit the account, committed in
                    two steps. Two copies of one notify that arrive together
                    both see "waiting" and both credit: a double credit. A
                    crash between the two commits leaves the order paid and
                    never credited; the gateway's retry finds it paid and is
                    acknowledged: a lost payment.
  --variant fixed   the credit's transaction starts by inserting the gateway's
                    transaction id into callback_log (UNIQUE): a second copy
                    fails that insert and only acknowledges.

It verifies the gateway's signature before trusting a byte: Stripe
(Stripe-Signature, HMAC-SHA256 with the endpoint secret) and WeChat Pay v3
(RSA-SHA256 over the Wechatpay-* headers with the platform public key, then
the AES-256-GCM resource under the APIv3 key; needs python3-cryptography).
The keys are the files twice writes into --keys-dir, read at each request.

The shop's database is a SQLite file, or a server: postgres://user@host/db
(?host=/socket/folder for a Unix socket; needs python3-psycopg2) or
mysql://user@host/db (?socket=/path; needs python3-pymysql), the same URL
twice is given as --db.

Run: service.py --variant buggy --db shop.sqlite --keys-dir twice-keys --port 8080
     (--port 0 picks a free port and writes it to --port-file)
"""
import argparse
import base64
import hashlib
import hmac
import json
import os
import sqlite3
import sys
import time
import urllib.parse

from flask import Flask, request
from werkzeug.serving import make_server

app = Flask(__name__)
ARGS = None
TOLERANCE = 300  # seconds a signature's timestamp may differ from our clock


def read_key(name):
    with open(os.path.join(ARGS.keys_dir, name), "rb") as f:
        return f.read().strip()


class Connection:
    """One connection to the shop's database, SQLite or a server, with the
    statements written once: `?` placeholders, transactions by hand."""

    def __init__(self, url):
        self.placeholder = "?"
        if url.startswith(("postgres://", "postgresql://")):
            import psycopg2
            self.conn = psycopg2.connect(url)
            self.conn.autocommit = True  # BEGIN and COMMIT are ours
            self.placeholder = "%s"
            self.begin_sql = "BEGIN"
            self.duplicate = psycopg2.IntegrityError
        elif url.startswith("mysql://"):
            import pymysql
            u = urllib.parse.urlsplit(url)
            q = dict(urllib.parse.parse_qsl(u.query))
            self.conn = pymysql.connect(user=urllib.parse.unquote(u.username or "root"),
                                        password=urllib.parse.unquote(u.password or ""),
                                        host=u.hostname or "localhost", port=u.port or 3306,
                                        unix_socket=q.get("socket"), database=u.path.lstrip("/") or None,
                                        autocommit=True)
            self.placeholder = "%s"
            self.begin_sql = "BEGIN"
            self.duplicate = pymysql.err.IntegrityError
        else:
            self.conn = sqlite3.connect(url, timeout=30, isolation_level=None)
            self.begin_sql = "BEGIN IMMEDIATE"  # SQLite: take the write lock first, or the upgrade deadlocks
            self.duplicate = sqlite3.IntegrityError

    def execute(self, sql, params=()):
        if self.placeholder != "?":
            sql = sql.replace("?", self.placeholder)
        cur = self.conn.cursor()
        cur.execute(sql, params)
        return cur

    def begin(self):
        self.execute(self.begin_sql)

    def close(self):
        self.conn.close()


def connect():
    return Connection(ARGS.db)


class BadNotify(Exception):
    pass


def stripe_payment():
    """(order_no, transaction_id, amount, currency) of a verified Stripe event, or None to ignore."""
    header = request.headers.get("Stripe-Signature", "")
    fields = dict(part.split("=", 1) for part in header.split(",") if "=" in part)
    if "t" not in fields or "v1" not in fields:
        raise BadNotify("no Stripe-Signature")
    expected = hmac.new(read_key("stripe_webhook_secret"), fields["t"].encode() + b"." + request.get_data(),
                        hashlib.sha256).hexdigest()
    if not hmac.compare_digest(expected, fields["v1"]):
        raise BadNotify("bad Stripe signature")
    if abs(time.time() - int(fields["t"])) > TOLERANCE:
        raise BadNotify("stale Stripe signature")
    event = json.loads(request.get_data())
    if event.get("type") != "payment_intent.succeeded":
        return None
    pi = event["data"]["object"]
    return pi["metadata"]["order_no"], pi["id"], int(pi["amount"]), pi["currency"].upper()


def wechat_payment():
    from cryptography.exceptions import InvalidSignature, InvalidTag
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import padding
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    h = request.headers
    ts, nonce, signature = h.get("Wechatpay-Timestamp", ""), h.get("Wechatpay-Nonce", ""), h.get("Wechatpay-Signature", "")
    if h.get("Wechatpay-Serial", "").encode() != read_key("wechatpay_serial"):
        raise BadNotify("unknown platform certificate serial")
    message = ts.encode() + b"\n" + nonce.encode() + b"\n" + request.get_data() + b"\n"
    public_key = serialization.load_pem_public_key(read_key("wechatpay_platform_public.pem"))
    try:
        public_key.verify(base64.b64decode(signature), message, padding.PKCS1v15(), hashes.SHA256())
    except (InvalidSignature, ValueError):
        raise BadNotify("bad WeChat Pay signature")
    if abs(time.time() - int(ts)) > TOLERANCE:
        raise BadNotify("stale WeChat Pay signature")
    event = json.loads(request.get_data())
    if event.get("event_type") != "TRANSACTION.SUCCESS":
        return None
    r = event["resource"]
    try:
        plain = AESGCM(read_key("wechatpay_apiv3_key")).decrypt(
            r["nonce"].encode(), base64.b64decode(r["ciphertext"]), r.get("associated_data", "").encode())
    except InvalidTag:
        raise BadNotify("resource does not decrypt")
    t = json.loads(plain)
    return t["out_trade_no"], t["transaction_id"], int(t["amount"]["total"]), t["amount"]["currency"]


def credit_buggy(conn, order_no, transaction_id, amount):
    # Check ...
    row = conn.execute("SELECT user_id, status FROM orders WHERE order_no = ?", (order_no,)).fetchone()
    if row is None:
        raise BadNotify("unknown order")
    user, status = row
    if status == "PAID":
        return
    time.sleep(ARGS.work_ms / 1000.0)  # ... the order service is asked for the items ...
    # ... then act, in two commits.
    conn.execute("BEGIN")
    conn.execute("UPDATE orders SET status = 'PAID' WHERE order_no = ?", (order_no,))
    conn.execute("COMMIT")
    time.sleep(ARGS.work_ms / 1000.0)  # ... the warehouse is told to ship; a crash here loses the credit ...
    conn.execute("BEGIN")
    conn.execute("UPDATE accounts SET balance = balance + ? WHERE user_id = ?", (amount, user))
    conn.execute("INSERT INTO ledger (order_no, user_id, amount) VALUES (?, ?, ?)", (order_no, user, amount))
    conn.execute("COMMIT")


def credit_fixed(conn, order_no, transaction_id, amount):
    time.sleep(ARGS.work_ms / 1000.0)  # the same call to the order service, outside the transaction
    conn.begin()
    try:
        try:
            conn.execute("INSERT INTO callback_log (transaction_id, order_no) VALUES (?, ?)", (transaction_id, order_no))
        except conn.duplicate:
            conn.execute("ROLLBACK")  # this payment was credited already: acknowledge only
            return
        row = conn.execute("SELECT user_id FROM orders WHERE order_no = ? AND status = 'WAIT_PAY'", (order_no,)).fetchone()
        if row is None:
            conn.execute("ROLLBACK")
            return
        conn.execute("UPDATE orders SET status = 'PAID' WHERE order_no = ?", (order_no,))
        conn.execute("UPDATE accounts SET balance = balance + ? WHERE user_id = ?", (amount, row[0]))
        conn.execute("INSERT INTO ledger (order_no, user_id, amount) VALUES (?, ?, ?)", (order_no, row[0], amount))
        conn.execute("COMMIT")
    except Exception:
        conn.execute("ROLLBACK")
        raise


@app.post("/notify")
def notify():
    try:
        payment = wechat_payment() if "Wechatpay-Signature" in request.headers else stripe_payment()
    except (BadNotify, KeyError, ValueError) as e:
        return json.dumps({"code": "FAIL", "message": str(e)}), 400
    if payment is None:
        return json.dumps({"code": "SUCCESS"}), 200  # an event we do not act on
    order_no, transaction_id, amount, currency = payment
    conn = connect()
    try:
        row = conn.execute("SELECT amount, currency FROM orders WHERE order_no = ?", (order_no,)).fetchone()
        if row is None or row[0] != amount or row[1] != currency:
            return json.dumps({"code": "FAIL", "message": "order, amount or currency does not match"}), 400
        (credit_fixed if ARGS.variant == "fixed" else credit_buggy)(conn, order_no, transaction_id, amount)
    finally:
        conn.close()
    return json.dumps({"code": "SUCCESS"}), 200


def main():
    global ARGS
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--variant", choices=["buggy", "fixed"], required=True)
    p.add_argument("--db", required=True,
                   help="the SQLite file, postgres://... or mysql://... (twice creates the tables from oracle.toml)")
    p.add_argument("--keys-dir", required=True, help="the folder twice writes the gateways' test keys into")
    p.add_argument("--port", type=int, default=8080, help="0: a free port, written to --port-file")
    p.add_argument("--port-file", help="write the port here once listening")
    p.add_argument("--work-ms", type=float, default=20.0, help="time the order service takes (between check and act)")
    ARGS = p.parse_args()
    try:  # a database we cannot reach is said now, in one line, not as a 500 per request
        connect().close()
    except ImportError as e:
        sys.exit(f"service.py: --db {ARGS.db}: {e}; install python3-psycopg2 (postgres://) or python3-pymysql (mysql://)")
    except Exception as e:
        sys.exit(f"service.py: --db {ARGS.db}: cannot connect: {str(e).strip()}")
    server = make_server("127.0.0.1", ARGS.port, app, threaded=True)
    if ARGS.port_file:
        with open(ARGS.port_file + ".tmp", "w") as f:
            f.write(str(server.server_port))
        os.replace(ARGS.port_file + ".tmp", ARGS.port_file)
    print(f"demo shop ({ARGS.variant}) on http://127.0.0.1:{server.server_port}/notify", file=sys.stderr, flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
