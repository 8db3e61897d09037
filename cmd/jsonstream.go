package cmd

import (
	"bufio"
	"bytes"
	"encoding"
	"encoding/json"
	"io"
	"reflect"
	"strings"
)

// writeJSONStream writes v as json.MarshalIndent(v, "", "  ") would (HTML
// characters not escaped), but a struct's slice fields element by element,
// so that a report of a hundred thousand addresses is never held twice in
// memory as one growing buffer. Values that are not plain structs are
// written whole.
func writeJSONStream(w io.Writer, v any) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	var scratch bytes.Buffer
	enc := json.NewEncoder(&scratch)
	enc.SetEscapeHTML(false)
	encode := func(x any, prefix string) ([]byte, error) {
		scratch.Reset()
		enc.SetIndent(prefix, "  ")
		if err := enc.Encode(x); err != nil {
			return nil, err
		}
		return bytes.TrimSuffix(scratch.Bytes(), []byte("\n")), nil
	}

	rv := reflect.ValueOf(v)
	for rv.Kind() == reflect.Pointer && !rv.IsNil() {
		rv = rv.Elem()
	}
	_, marshaler := v.(json.Marshaler)
	_, textMarshaler := v.(encoding.TextMarshaler)
	if rv.Kind() != reflect.Struct || marshaler || textMarshaler {
		b, err := encode(v, "")
		if err != nil {
			return err
		}
		bw.Write(b)
		bw.WriteByte('\n')
		return bw.Flush()
	}
	rt := rv.Type()
	bw.WriteString("{")
	first := true
	for i := 0; i < rt.NumField(); i++ {
		f := rt.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !f.IsExported() || name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		fv := rv.Field(i)
		if strings.Contains(","+opts+",", ",omitempty,") && fv.IsZero() {
			continue
		}
		if !first {
			bw.WriteString(",")
		}
		first = false
		key, _ := json.Marshal(name)
		bw.WriteString("\n  ")
		bw.Write(key)
		bw.WriteString(": ")
		if fv.Kind() == reflect.Slice && fv.Len() > 0 {
			bw.WriteString("[")
			for j := 0; j < fv.Len(); j++ {
				b, err := encode(fv.Index(j).Interface(), "    ")
				if err != nil {
					return err
				}
				if j > 0 {
					bw.WriteString(",")
				}
				bw.WriteString("\n    ")
				bw.Write(b)
			}
			bw.WriteString("\n  ]")
			continue
		}
		b, err := encode(fv.Interface(), "  ")
		if err != nil {
			return err
		}
		bw.Write(b)
	}
	if first {
		bw.WriteString("}\n")
	} else {
		bw.WriteString("\n}\n")
	}
	return bw.Flush()
}
