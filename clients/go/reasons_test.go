package filetools

import (
	"go/ast"
	"go/parser"
	"go/token"
	"slices"
	"strconv"
	"strings"
	"testing"

	filetoolsv1 "github.com/filetools/filetools/clients/go/gen/filetools/v1"
)

// The Reason constants in errors.go are the ErrorReason enum of
// common.proto, no more and no less: a reason added to the proto needs its
// constant here.
func TestReasonConstantsMatchTheProtoEnum(t *testing.T) {
	file, err := parser.ParseFile(token.NewFileSet(), "errors.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var declared []string
	ast.Inspect(file, func(node ast.Node) bool {
		spec, ok := node.(*ast.ValueSpec)
		if !ok {
			return true
		}
		if ident, ok := spec.Type.(*ast.Ident); !ok || ident.Name != "Reason" {
			return true
		}
		for _, value := range spec.Values {
			reason, err := strconv.Unquote(value.(*ast.BasicLit).Value)
			if err != nil {
				t.Fatal(err)
			}
			declared = append(declared, reason)
		}
		return true
	})
	var enum []string
	for number, name := range filetoolsv1.ErrorReason_name {
		if number != 0 {
			enum = append(enum, strings.TrimPrefix(name, "ERROR_REASON_"))
		}
	}
	slices.Sort(declared)
	slices.Sort(enum)
	if !slices.Equal(declared, enum) {
		t.Errorf("Reason constants %v\ndiffer from the ErrorReason enum %v", declared, enum)
	}
}
