"""A spyne SOAP service that knows nothing of WS-Reliability, for wsrkit's
interop tests. It serves SOAP 1.1 and 1.2 on one URL (by Content-Type) and
appends one JSON line per operation run to the file named by argv[1], so
the test can check which operation ran and how often.

Operations:
  Order(item, qty)  -- one input element for two operations of the client's
                       WSDL: the SOAPAction says whether to place or cancel.
                       item "refused" answers a Client fault.
  Notify(text)      -- one-way.

It prints "listening <port>" once it serves on 127.0.0.1.
"""
import json
import sys
import threading
from wsgiref.simple_server import make_server, WSGIRequestHandler

from spyne import Application, ServiceBase, Unicode, Integer, rpc, Fault
from spyne.protocol.soap import Soap11, Soap12
from spyne.server.wsgi import WsgiApplication

TNS = "urn:wsrkit:interop:shop"
LOG = open(sys.argv[1], "a", buffering=1)
LOCK = threading.Lock()


def record(op, **kw):
    with LOCK:
        LOG.write(json.dumps(dict(op=op, **kw), sort_keys=True) + "\n")


def action_of(ctx):
    env = ctx.transport.req_env
    a = env.get("HTTP_SOAPACTION", "").strip().strip('"')
    if not a:  # SOAP 1.2: the action parameter of the media type
        for part in env.get("CONTENT_TYPE", "").split(";"):
            k, _, v = part.strip().partition("=")
            if k == "action":
                a = v.strip('"')
    return a


class Shop(ServiceBase):
    @rpc(Unicode, Integer, _returns=Unicode)
    def Order(ctx, item, qty):
        action = action_of(ctx)
        if item == "refused":
            record("refused", item=item, action=action)
            raise Fault(faultcode="Client", faultstring="order refused: " + item)
        if action.endswith("Cancel"):
            record("cancel", item=item, qty=qty, action=action)
            return "cancelled %s" % item
        if action.endswith("Place"):
            record("place", item=item, qty=qty, action=action)
            return "placed %d %s" % (qty, item)
        record("unknown", item=item, action=action)
        raise Fault(faultcode="Client", faultstring="unknown action %r" % action)

    @rpc(Unicode, _is_async=True)
    def Notify(ctx, text):
        record("notify", text=text, action=action_of(ctx))


app11 = WsgiApplication(Application([Shop], TNS, in_protocol=Soap11(), out_protocol=Soap11()))
app12 = WsgiApplication(Application([Shop], TNS, in_protocol=Soap12(), out_protocol=Soap12()))


def dispatch(environ, start_response):
    if environ.get("CONTENT_TYPE", "").startswith("application/soap+xml"):
        return app12(environ, start_response)
    return app11(environ, start_response)


class Quiet(WSGIRequestHandler):
    def log_message(self, *args):
        pass


if __name__ == "__main__":
    from socketserver import ThreadingMixIn
    from wsgiref.simple_server import WSGIServer

    class Server(ThreadingMixIn, WSGIServer):
        daemon_threads = True

    srv = make_server("127.0.0.1", 0, dispatch, server_class=Server, handler_class=Quiet)
    print("listening %d" % srv.server_port, flush=True)
    srv.serve_forever()
