package memory

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSchemasMatchArgumentTypes: every tool's schema lists exactly its
// argument type's fields, in order, all required, with the JSON type of
// each field's Go type, and nullable exactly where the field is a pointer;
// the items of an array describe its element type the same way.
func TestSchemasMatchArgumentTypes(t *testing.T) {
	s := &Store{opts: Options{FactFiles: defaultFactFiles()}}
	var check func(t *testing.T, where string, typ reflect.Type, sch map[string]any)
	check = func(t *testing.T, where string, typ reflect.Type, sch map[string]any) {
		require.Equal(t, "object", sch["type"], where)
		require.Equal(t, false, sch["additionalProperties"], where)
		props := sch["properties"].(map[string]any)
		required := sch["required"].([]any)
		require.Len(t, props, typ.NumField(), where)
		require.Len(t, required, typ.NumField(), where)
		for i := range typ.NumField() {
			f := typ.Field(i)
			name := argName(f)
			require.Equal(t, name, required[i], "%s: property %d", where, i)
			p, ok := props[name].(map[string]any)
			require.True(t, ok, "%s: no property %s", where, name)
			ft := f.Type
			want := any(nil)
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
				want = []any{schemaType(ft), "null"}
			} else {
				want = schemaType(ft)
			}
			require.Equal(t, want, p["type"], "%s.%s", where, name)
			require.NotEmpty(t, p["description"], "%s.%s", where, name)
			if ft.Kind() == reflect.Slice {
				check(t, where+"."+name+"[]", ft.Elem(), p["items"].(map[string]any))
			}
		}
	}
	require.Len(t, toolDefs, 6)
	for _, d := range toolDefs {
		var sch map[string]any
		require.NoError(t, json.Unmarshal(objectSchema(d.args, s.pathList()), &sch), d.name)
		check(t, d.name, d.args, sch)
	}
	require.Panics(t, func() { schemaType(reflect.TypeFor[float64]()) }, "an argument type with no schema type is a bug")
}
