package soap

import "testing"

func TestBusinessFault(t *testing.T) {
	const ns11 = `xmlns:s="http://schemas.xmlsoap.org/soap/envelope/"`
	const ns12 = `xmlns:e="http://www.w3.org/2003/05/soap-envelope"`
	cases := []struct {
		v      Version
		body   string
		code   string
		fault  bool
		status int
	}{
		{SOAP11, `<s:Fault ` + ns11 + `><faultcode>s:Client</faultcode><faultstring>no</faultstring></s:Fault>`, "Client", true, 500},
		{SOAP11, `<s:Fault ` + ns11 + `><faultcode>s:Client.Auth</faultcode><faultstring>no</faultstring></s:Fault>`, "Client", true, 500},
		{SOAP11, `<s:Fault ` + ns11 + `><faultcode>s:Server</faultcode></s:Fault>`, "Server", true, 500},
		{SOAP12, `<e:Fault ` + ns12 + `><e:Code><e:Value>e:Sender</e:Value><e:Subcode><e:Value>x:Y</e:Value></e:Subcode></e:Code><e:Reason><e:Text xml:lang="en">no</e:Text></e:Reason></e:Fault>`, "Sender", true, 400},
		{SOAP12, `<e:Fault ` + ns12 + `><e:Code><e:Value>e:Receiver</e:Value></e:Code></e:Fault>`, "Receiver", true, 500},
		// A Fault element of the other SOAP version, or of no SOAP namespace, is business data.
		{SOAP12, `<s:Fault ` + ns11 + `><faultcode>s:Client</faultcode></s:Fault>`, "", false, 200},
		{SOAP11, `<Fault><faultcode>Client</faultcode></Fault>`, "", false, 200},
		{SOAP11, `<r:OrderResponse xmlns:r="urn:r"><r:Fault>none</r:Fault></r:OrderResponse>`, "", false, 200},
		{SOAP11, ``, "", false, 200},
	}
	for _, c := range cases {
		code, ok := BusinessFault(c.v, []byte(c.body))
		if ok != c.fault || code != c.code {
			t.Errorf("BusinessFault(%v, %s) = %q %v, want %q %v", c.v, c.body, code, ok, c.code, c.fault)
		}
		if s := BusinessStatus(c.v, []byte(c.body)); s != c.status {
			t.Errorf("BusinessStatus(%v, %s) = %d, want %d", c.v, c.body, s, c.status)
		}
	}
}

func TestRequestActionAndCheckAction(t *testing.T) {
	for _, c := range []struct {
		v             Version
		ct, hdr, want string
	}{
		{SOAP11, "", `"urn:a"`, "urn:a"},
		{SOAP11, "", `urn:a`, "urn:a"},
		{SOAP11, "", `""`, ""},
		{SOAP11, "", `"urn:a\"b"`, `urn:a"b`},
		{SOAP12, "urn:b", `"urn:a"`, "urn:b"},
	} {
		if got := RequestAction(c.v, c.ct, c.hdr); got != c.want {
			t.Errorf("RequestAction(%v, %q, %q) = %q, want %q", c.v, c.ct, c.hdr, got, c.want)
		}
	}
	// What SOAPAction writes, RequestAction reads back.
	if got := RequestAction(SOAP11, "", SOAPAction(`urn:a"\b`)); got != `urn:a"\b` {
		t.Errorf("round trip: %q", got)
	}
	for _, a := range []string{"", "urn:x", "http://example.com/svc#Op", "tns:op"} {
		if err := CheckAction(a, 100); err != nil {
			t.Errorf("CheckAction(%q) = %v", a, err)
		}
	}
	for _, a := range []string{"a\r\nX: y", `urn:"q"`, `urn:a\b`, "urn:a b", "noscheme", ":x", "1a:b", "urn:" + string(make([]byte, 100))} {
		if err := CheckAction(a, 100); err == nil {
			t.Errorf("CheckAction(%q) accepted", a)
		}
	}
}

func TestAppendPlainFaultParsesBack(t *testing.T) {
	for _, v := range []Version{SOAP11, SOAP12} {
		for _, sender := range []bool{true, false} {
			b, err := AppendPlainFault(nil, v, FaultCode(v, sender), "no ack within 30s for <m1> & co")
			if err != nil {
				t.Fatal(err)
			}
			env, err := Parse(b, ParseOptions{})
			if err != nil || env.Fault == nil {
				t.Fatalf("%v: %v %s", v, err, b)
			}
			want := map[bool]map[Version]string{true: {SOAP11: "Client", SOAP12: "Sender"}, false: {SOAP11: "Server", SOAP12: "Receiver"}}[sender][v]
			if env.Fault.SOAPCode != want || env.Fault.Reason != "no ack within 30s for <m1> & co" || env.Fault.Code != 0 {
				t.Fatalf("%v: %+v", v, env.Fault)
			}
		}
	}
}
