"""A zeep client that knows nothing of WS-Reliability, for wsrkit's interop
tests: it loads shop.wsdl, points the SOAP 1.1 or 1.2 binding at an address
and runs the calls given as JSON, printing one JSON line per call:
{"ok": result} or {"fault": {"code": ..., "message": ...}} or
{"error": ...}.

usage: client.py WSDL ADDRESS 1.1|1.2 GROUPKEY|- CALLS_JSON
"""
import json
import sys

import requests
import zeep
from zeep.exceptions import Fault, TransportError

wsdl, address, version, key, calls = sys.argv[1:6]
session = requests.Session()
if key != "-":
    session.headers["WSRKit-Group-Key"] = key
client = zeep.Client(wsdl, transport=zeep.Transport(session=session, timeout=60, operation_timeout=60))
binding = "{urn:wsrkit:interop:shop}" + ("Shop12" if version == "1.2" else "Shop11")
svc = client.create_service(binding, address)
for call in json.loads(calls):
    op = call.pop("op")
    try:
        res = getattr(svc, op)(**call)
        print(json.dumps({"ok": res}), flush=True)
    except Fault as f:
        code = f.code.localname if hasattr(f.code, "localname") else str(f.code)
        print(json.dumps({"fault": {"code": code, "message": f.message}}), flush=True)
    except TransportError as e:
        print(json.dumps({"error": "HTTP %s: %s" % (e.status_code, e.message)}), flush=True)
    except Exception as e:  # noqa: BLE001 - report, the Go test judges
        print(json.dumps({"error": "%s: %s" % (type(e).__name__, e)}), flush=True)
