package filetools

// A tool call's arguments: parsed as JavaScript's JSON.parse would (numbers
// as float64, keys in JavaScript's order), validated against the tool's
// JSON Schema, and the first violation put in the words every client writes
// (describe in clients/ts/src/tools/dispatcher.ts). The TypeScript
// dispatcher's validator, ajv, stops at the first violation it meets; the one
// used here reports them all, so the one ajv would have met first is picked.

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
)

// parseArguments is the arguments object of a call, or what is wrong with it.
func parseArguments(args any) (map[string]any, jsonKeys, string) {
	var text []byte
	switch a := args.(type) {
	case nil:
		text = []byte("{}")
	case string:
		text = []byte(a)
	case []byte:
		text = a
	case json.RawMessage:
		text = a
	default:
		encoded, err := json.Marshal(a)
		if err != nil {
			return nil, nil, "the arguments must be a JSON object"
		}
		if string(encoded) == "null" { // a nil map or pointer: no arguments, as null is in TypeScript
			encoded = []byte("{}")
		}
		text = encoded
	}
	if len(text) == 0 {
		text = []byte("{}")
	}
	value, keys, err := decodeJSON(text)
	if err != nil {
		return nil, nil, "the arguments are not valid JSON"
	}
	object, isObject := value.(map[string]any)
	if !isObject {
		return nil, nil, "the arguments must be a JSON object"
	}
	return object, keys, ""
}

// jsonKeys are the keys of each object of a JSON document in the order
// JSON.parse gives them, by the object's JSON Pointer ("" for the root).
type jsonKeys map[string][]string

// maxDepth bounds the nesting of arguments, as encoding/json does.
const maxDepth = 10000

// decodeJSON parses one JSON value as encoding/json does into any, but with
// JavaScript's numbers (float64: a number too large for one is ±Inf, as in
// JavaScript, which the schema then refuses) and each object's keys kept in
// JavaScript's order.
func decodeJSON(text []byte) (any, jsonKeys, error) {
	dec := json.NewDecoder(bytes.NewReader(text))
	dec.UseNumber()
	keys := jsonKeys{}
	value, err := decodeValue(dec, "", keys, 0)
	if err != nil {
		return nil, nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, nil, errors.New("data after the JSON value")
	}
	return value, keys, nil
}

func decodeValue(dec *json.Decoder, pointer string, keys jsonKeys, depth int) (any, error) {
	if depth > maxDepth {
		return nil, errors.New("nested too deeply")
	}
	token, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch token := token.(type) {
	case json.Delim:
		if token == '[' {
			list := []any{}
			for dec.More() {
				item, err := decodeValue(dec, pointer+"/"+strconv.Itoa(len(list)), keys, depth+1)
				if err != nil {
					return nil, err
				}
				list = append(list, item)
			}
			_, err := dec.Token() // ]
			return list, err
		}
		object := map[string]any{}
		var order []string
		for dec.More() {
			key, err := dec.Token()
			if err != nil {
				return nil, err
			}
			name := key.(string)
			value, err := decodeValue(dec, pointer+"/"+escapePointer(name), keys, depth+1)
			if err != nil {
				return nil, err
			}
			if _, seen := object[name]; !seen {
				order = append(order, name)
			}
			object[name] = value // a repeated key: the last value, in the first one's place, as JSON.parse does
		}
		keys[pointer] = javaScriptOrder(order)
		_, err := dec.Token() // }
		return object, err
	case json.Number:
		f, err := strconv.ParseFloat(string(token), 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			return nil, err
		}
		return f, nil
	default: // string, bool, nil
		return token, nil
	}
}

// javaScriptOrder puts keys in the order a JavaScript object lists them:
// array indices ("0", "17") first, ascending, then the others as inserted.
func javaScriptOrder(keys []string) []string {
	index := func(key string) (uint64, bool) {
		n, err := strconv.ParseUint(key, 10, 32)
		return n, err == nil && n < 1<<32-1 && strconv.FormatUint(n, 10) == key
	}
	ordered := slices.Clone(keys)
	slices.SortStableFunc(ordered, func(a, b string) int {
		na, ia := index(a)
		nb, ib := index(b)
		switch {
		case ia && ib:
			return int(na) - int(nb)
		case ia:
			return -1
		case ib:
			return 1
		}
		return 0
	})
	return ordered
}

func escapePointer(token string) string {
	return strings.ReplaceAll(strings.ReplaceAll(token, "~", "~0"), "/", "~1")
}

// withoutNulls is value without the optional arguments (at any depth the
// schema describes) that are null: strict-mode models send null for what
// they leave out. A null for a required argument stays, for the schema to
// refuse.
func withoutNulls(schema map[string]any, value any) any {
	switch v := value.(type) {
	case []any:
		items, described := schema["items"].(map[string]any)
		if !described {
			return v
		}
		kept := make([]any, len(v))
		for i, item := range v {
			kept[i] = withoutNulls(items, item)
		}
		return kept
	case map[string]any:
		properties, _ := schema["properties"].(map[string]any)
		required, _ := schema["required"].([]any)
		kept := make(map[string]any, len(v))
		for name, item := range v {
			sub, described := properties[name].(map[string]any)
			switch {
			case !described:
				kept[name] = item
			case item == nil && !slices.Contains(required, any(name)):
			default:
				kept[name] = withoutNulls(sub, item)
			}
		}
		return kept
	}
	return value
}

// toolSchema is a tool's argument schema, compiled, and as data to find
// where ajv would have looked first.
type toolSchema struct {
	compiled *jsonschema.Schema
	tree     map[string]any
	keys     jsonKeys
}

func compileSchema(tool string, raw json.RawMessage) (*toolSchema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	url := "urn:filetools:tool:" + tool
	compiler := jsonschema.NewCompiler()
	compiler.DefaultDraft(jsonschema.Draft7) // ajv's default, which the TypeScript dispatcher uses
	if err := compiler.AddResource(url, doc); err != nil {
		return nil, err
	}
	compiled, err := compiler.Compile(url)
	if err != nil {
		return nil, err
	}
	tree, keys, err := decodeJSON(raw)
	if err != nil {
		return nil, err
	}
	return &toolSchema{compiled: compiled, tree: tree.(map[string]any), keys: keys}, nil
}

// check is "" when the arguments fit the schema, otherwise the first
// violation in words.
func (s *toolSchema) check(args map[string]any, keys jsonKeys) string {
	err := s.compiled.Validate(args)
	if err == nil {
		return ""
	}
	var verr *jsonschema.ValidationError
	if !errors.As(err, &verr) {
		return "they do not match the tool's schema"
	}
	var first *jsonschema.ValidationError
	var firstAt []int
	for _, leaf := range leaves(verr) {
		if at := s.position(leaf); first == nil || slices.Compare(at, firstAt) < 0 {
			first, firstAt = leaf, at
		}
	}
	return s.describe(first, keys)
}

// leaves are the violations themselves, without the groups that hold them.
func leaves(e *jsonschema.ValidationError) []*jsonschema.ValidationError {
	if len(e.Causes) == 0 {
		return []*jsonschema.ValidationError{e}
	}
	var all []*jsonschema.ValidationError
	for _, cause := range e.Causes {
		all = append(all, leaves(cause)...)
	}
	return all
}

// Where ajv checks each keyword at one value: the type first, then enum,
// then the keywords of the value's type in the order of ajv's vocabularies
// (maximum before minimum, ..., required, additionalProperties), and the
// values inside (properties, in the schema's order; items, by index) last.
const inside = 10

func keywordRank(k jsonschema.ErrorKind) int {
	switch k.(type) {
	case *kind.Type, *kind.InvalidJsonValue:
		return 0
	case *kind.Enum, *kind.Const:
		return 1
	case *kind.Maximum:
		return 2
	case *kind.Minimum:
		return 3
	case *kind.MaxLength:
		return 4
	case *kind.MinLength:
		return 5
	case *kind.MaxItems:
		return 6
	case *kind.MinItems:
		return 7
	case *kind.Required:
		return 8
	default: // additionalProperties, and keywords the catalogue does not use
		return 9
	}
}

// position is the order in which ajv would meet e: compare two with
// slices.Compare.
func (s *toolSchema) position(e *jsonschema.ValidationError) []int {
	var at []int
	s.walk(e.InstanceLocation, func(index int) { at = append(at, inside, index) })
	return append(at, keywordRank(e.ErrorKind))
}

// walk follows an argument's path through the schema, telling each step's
// place among its siblings, and returns the schema of the argument.
func (s *toolSchema) walk(location []string, step func(index int)) map[string]any {
	node, pointer := s.tree, ""
	for _, token := range location {
		if properties, isObject := node["properties"].(map[string]any); isObject {
			pointer += "/properties"
			step(slices.Index(s.keys[pointer], token))
			node, _ = properties[token].(map[string]any)
			pointer += "/" + escapePointer(token)
		} else {
			index, _ := strconv.Atoi(token)
			step(index)
			node, _ = node["items"].(map[string]any)
			pointer += "/items"
		}
	}
	return node
}

// describe puts one violation in words every client writes the same way.
func (s *toolSchema) describe(e *jsonschema.ValidationError, keys jsonKeys) string {
	where := ""
	if len(e.InstanceLocation) > 0 {
		where = strings.Join(e.InstanceLocation, ".") + " "
	}
	switch k := e.ErrorKind.(type) {
	case *kind.Required:
		return strings.TrimSpace(where + "missing required argument " + k.Missing[0])
	case *kind.AdditionalProperties:
		// The first unknown argument in the order the caller wrote them (as JavaScript lists them).
		pointer := ""
		for _, token := range e.InstanceLocation {
			pointer += "/" + escapePointer(token)
		}
		unknown := slices.MinFunc(k.Properties, func(a, b string) int {
			return slices.Index(keys[pointer], a) - slices.Index(keys[pointer], b)
		})
		return strings.TrimSpace(where + "unknown argument " + unknown)
	case *kind.Type:
		return where + "must be " + typeName(strings.Join(k.Want, ","))
	case *kind.InvalidJsonValue: // a number beyond float64, Infinity in JavaScript: no JSON type
		return where + "must be " + typeName(schemaType(s.walk(e.InstanceLocation, func(int) {})))
	case *kind.Enum:
		allowed := make([]string, len(k.Want))
		for i, v := range k.Want {
			allowed[i] = jsonText(v)
		}
		return where + "must be one of " + strings.Join(allowed, ", ")
	case *kind.Minimum:
		return where + "must be at least " + k.Want.RatString()
	case *kind.Maximum:
		return where + "must be at most " + k.Want.RatString()
	case *kind.MinLength:
		return where + "must not be empty"
	case *kind.MaxLength:
		return where + "must be at most " + strconv.Itoa(k.Want) + " characters"
	case *kind.MinItems:
		return where + "must have at least " + strconv.Itoa(k.Want) + " items"
	case *kind.MaxItems:
		return where + "must have at most " + strconv.Itoa(k.Want) + " items"
	default: // keywords the catalogue does not use
		return where + "is not valid"
	}
}

// typeName is "a string", "an integer", "an object": the article by the
// first letter, as the TypeScript dispatcher chooses it.
func typeName(t string) string {
	if t != "" && strings.ContainsRune("aeiou", rune(t[0])) {
		return "an " + t
	}
	return "a " + t
}

// schemaType is the type a schema names ("integer"; ["string","null"] as "string,null", as ajv writes it).
func schemaType(schema map[string]any) string {
	if t, single := schema["type"].(string); single {
		return t
	}
	names, _ := schema["type"].([]any)
	return strings.Trim(jsonText(names), "[]")
}

// jsonText is a value of a schema as a model reads it in a message: a
// string as it is, anything else as JSON.
func jsonText(v any) string {
	if s, isString := v.(string); isString {
		return s
	}
	encoded, _ := json.Marshal(v)
	return string(encoded)
}
