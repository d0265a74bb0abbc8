"""A multipart/form-data peer for the client's FormData: Python's own MIME
parser (the email package) reads each POST body and answers one line per
part, "name|filename|content-type|size|crc32". Prints "port N" first."""
import email.parser
import email.policy
import http.server
import sys
import zlib


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_POST(self):
        body = self.rfile.read(int(self.headers["Content-Length"]))
        head = ("Content-Type: " + self.headers["Content-Type"] + "\r\n\r\n").encode()
        msg = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(head + body)
        lines = []
        for part in msg.iter_parts():
            data = part.get_payload(decode=True) or b""
            lines.append("|".join([
                part.get_param("name", header="content-disposition") or "-",
                part.get_filename() or "-",
                part.get_content_type(),
                str(len(data)),
                str(zlib.crc32(data)),
            ]))
        answer = ("\n".join(lines) + "\n").encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)


def main():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    print("port", server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
