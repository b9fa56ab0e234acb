package jsonbody

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

type body struct {
	Name  string `json:"name"`
	Count int    `json:"count,omitempty"`
}

func TestDecode(t *testing.T) {
	tests := []struct {
		name   string
		in     string
		status int    // 0: accepted
		msg    string // in the error
	}{
		{"one value", `{"name":"a","count":2}`, 0, ""},
		{"trailing white space", "{\"name\":\"a\"}\n\t ", 0, ""},
		{"empty", ``, 400, "empty"},
		{"only space", "  \n", 400, "empty"},
		{"trailing garbage", `{"name":"a"}garbage`, 400, "unexpected data after the JSON value"},
		{"trailing brace", `{"name":"a"}}`, 400, "unexpected data after the JSON value"},
		{"two values", `{"name":"a"} {"name":"b"}`, 400, "more than one JSON value"},
		{"two values no space", `{"name":"a"}{"name":"b"}`, 400, "more than one JSON value"},
		{"value then number", `{"name":"a"} 1`, 400, "more than one JSON value"},
		{"unknown field", `{"name":"a","nmae":"b"}`, 400, `unknown field "nmae"`},
		{"wrong type", `{"name":1}`, 400, "name: want string"},
		{"not an object", `[1,2]`, 400, "want jsonbody.body"},
		{"truncated", `{"name":"a"`, 400, "truncated"},
		{"syntax", `{"name":'a'}`, 400, "malformed JSON"},
		{"oversized", `{"name":"` + strings.Repeat("x", 200) + `"}`, 413, "larger than 64 bytes"},
		{"oversized after value", `{"name":"a"}` + strings.Repeat(" ", 100), 413, "larger than 64 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(tt.in))
			var v body
			err := Decode(httptest.NewRecorder(), r, &v, 64)
			if tt.status == 0 {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if v.Name != "a" {
					t.Fatalf("decoded %+v", v)
				}
				return
			}
			var be *Error
			if !errors.As(err, &be) || !errors.Is(err, ErrBadBody) {
				t.Fatalf("want *Error, got %v (decoded %+v)", err, v)
			}
			if be.Status != tt.status || !strings.Contains(be.Msg, tt.msg) {
				t.Fatalf("got %d %q, want %d containing %q", be.Status, be.Msg, tt.status, tt.msg)
			}
		})
	}
}

func TestUnmarshal(t *testing.T) {
	var v body
	if err := Unmarshal([]byte(`{"name":"a"}`), &v); err != nil || v.Name != "a" {
		t.Fatalf("%+v %v", v, err)
	}
	for _, in := range []string{`{"name":"a"}x`, `{"name":"a"}{}`, `{"x":1}`, ``} {
		if err := Unmarshal([]byte(in), &v); !errors.Is(err, ErrBadBody) {
			t.Errorf("%q: accepted (%v)", in, err)
		}
	}
}

// FuzzUnmarshal: whatever the input, an accepted body is exactly one
// value: encoding/json's own Unmarshal (which also refuses trailing
// data) accepts it too.
func FuzzUnmarshal(f *testing.F) {
	for _, s := range []string{`{"name":"a"}`, `{"name":"a"} {}`, `{"name":"a"}x`, `{}`, `null`, ` {"count":1} `} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var v body
		if err := Unmarshal(b, &v); err != nil {
			if !errors.Is(err, ErrBadBody) {
				t.Fatalf("error not a bad body: %v", err)
			}
			return
		}
		var w body
		if err := json.Unmarshal(b, &w); err != nil {
			t.Fatalf("accepted %q that encoding/json refuses: %v", b, err)
		}
	})
}
