package parquetio

import (
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/schema"

	"github.com/grmdp/grmdp/traj"
)

// conv says how a column's physical values become ours.
type conv uint8

const (
	convInt32    conv = iota // INT32: int8, int16, int32 or unannotated
	convUint32               // INT32 holding uint8, uint16 or uint32
	convInt64                // INT64: int64 or unannotated
	convUint64               // INT64 holding uint64
	convFloat32              // FLOAT
	convFloat64              // DOUBLE
	convFloat16              // FIXED_LEN_BYTE_ARRAY(2) annotated FLOAT16
	convString               // BYTE_ARRAY annotated STRING or ENUM
	convDec32                // INT32 annotated DECIMAL
	convDec64                // INT64 annotated DECIMAL
	convDecFixed             // FIXED_LEN_BYTE_ARRAY annotated DECIMAL
	convDecBytes             // BYTE_ARRAY annotated DECIMAL
)

func (c conv) isInt() bool   { return c <= convUint64 }
func (c conv) isDec() bool   { return c >= convDec32 && c <= convDecBytes }
func (c conv) isFloat() bool { return c >= convFloat32 && c <= convFloat16 }

// want says which values a contract column accepts.
type want uint8

const (
	wantIntOrString want = iota // site, traj, action
	wantInt                     // step
	wantNumber                  // reward, scalar state
	wantFloatList               // list state
)

func (w want) String() string {
	switch w {
	case wantIntOrString:
		return "an integer or string column"
	case wantInt:
		return "an integer column"
	case wantNumber:
		return "a numeric (integer or floating-point) column"
	default:
		return "a list of float or double"
	}
}

// colSpec is a contract column resolved in one file's schema.
type colSpec struct {
	name   string // the column's name
	leaf   int    // index of its leaf column in the Parquet schema
	conv   conv
	maxDef int16
	// For a list column: an element exists at definition level listDef or
	// above; below listDef-1 the list itself is null, at listDef-1 it is
	// empty.
	list    bool
	listDef int16
	typ     string // the column's type, for messages
	// scale is a DECIMAL column's: its values are unscaled / 10^scale.
	scale int32
	// nullHint says that a null in the column can be dropped with
	// --nulls (the action, reward and state columns); nullable, that a
	// null marks its row missing (traj.Chunk.Missing) instead of being an
	// error.
	nullHint, nullable bool
}

// describeNode names a schema node's type the way users see it in Arrow,
// DuckDB or pandas: "int32", "string", "list<double>", "struct".
func describeNode(n schema.Node) string {
	switch n := n.(type) {
	case *schema.PrimitiveNode:
		s := describePrimitive(n)
		if n.RepetitionType() == parquet.Repetitions.Repeated {
			return "repeated " + s
		}
		return s
	case *schema.GroupNode:
		lt := n.LogicalType()
		isList := n.ConvertedType() == schema.ConvertedTypes.List
		if lt != nil {
			if _, ok := lt.(schema.ListLogicalType); ok {
				isList = true
			}
		}
		isMap := n.ConvertedType() == schema.ConvertedTypes.Map || n.ConvertedType() == schema.ConvertedTypes.MapKeyValue
		if lt != nil {
			if _, ok := lt.(schema.MapLogicalType); ok {
				isMap = true
			}
		}
		switch {
		case isMap:
			return "map"
		case isList:
			if leaf := singleLeaf(n); leaf != nil {
				return "list<" + describePrimitive(leaf) + ">"
			}
			return "list"
		case n.RepetitionType() == parquet.Repetitions.Repeated:
			return "repeated group"
		default:
			return "struct"
		}
	}
	return "unknown"
}

// singleLeaf returns the only primitive node below n, or nil.
func singleLeaf(n *schema.GroupNode) *schema.PrimitiveNode {
	var leaf *schema.PrimitiveNode
	count := 0
	var walk func(schema.Node)
	walk = func(x schema.Node) {
		switch x := x.(type) {
		case *schema.PrimitiveNode:
			leaf = x
			count++
		case *schema.GroupNode:
			for i := 0; i < x.NumFields(); i++ {
				walk(x.Field(i))
			}
		}
	}
	walk(n)
	if count != 1 {
		return nil
	}
	return leaf
}

func describePrimitive(n *schema.PrimitiveNode) string {
	switch lt := n.LogicalType().(type) {
	case nil, schema.NoLogicalType:
	case schema.IntLogicalType:
		if lt.IsSigned() {
			return fmt.Sprintf("int%d", lt.BitWidth())
		}
		return fmt.Sprintf("uint%d", lt.BitWidth())
	case schema.StringLogicalType:
		return "string"
	case schema.EnumLogicalType:
		return "enum"
	case schema.DecimalLogicalType:
		return fmt.Sprintf("decimal(%d,%d)", lt.Precision(), lt.Scale())
	case schema.DateLogicalType:
		return "date"
	case schema.TimeLogicalType:
		return "time"
	case schema.TimestampLogicalType:
		return "timestamp"
	case schema.Float16LogicalType:
		return "float16"
	case schema.JSONLogicalType:
		return "json"
	case schema.UUIDLogicalType:
		return "uuid"
	case schema.NullLogicalType:
		return "null"
	default:
		return strings.ToLower(lt.String())
	}
	switch n.PhysicalType() {
	case parquet.Types.Boolean:
		return "bool"
	case parquet.Types.Int32:
		return "int32"
	case parquet.Types.Int64:
		return "int64"
	case parquet.Types.Int96:
		return "int96 timestamp"
	case parquet.Types.Float:
		return "float"
	case parquet.Types.Double:
		return "double"
	case parquet.Types.ByteArray:
		return "binary"
	case parquet.Types.FixedLenByteArray:
		return fmt.Sprintf("fixed_size_binary[%d]", n.TypeLength())
	}
	return strings.ToLower(n.PhysicalType().String())
}

// primitiveConv returns how to read a primitive node's values, or false when
// the type is not a number or a string.
func primitiveConv(n *schema.PrimitiveNode) (conv, bool) {
	lt := n.LogicalType()
	plain := lt == nil || lt.IsNone()
	if dt, ok := lt.(schema.DecimalLogicalType); ok && dt.Scale() >= 0 {
		switch n.PhysicalType() {
		case parquet.Types.Int32:
			return convDec32, true
		case parquet.Types.Int64:
			return convDec64, true
		case parquet.Types.FixedLenByteArray:
			if n.TypeLength() >= 1 && n.TypeLength() <= 32 {
				return convDecFixed, true
			}
		case parquet.Types.ByteArray:
			return convDecBytes, true
		}
		return 0, false
	}
	switch n.PhysicalType() {
	case parquet.Types.Int32:
		if plain {
			return convInt32, true
		}
		if it, ok := lt.(schema.IntLogicalType); ok {
			if it.IsSigned() {
				return convInt32, true
			}
			return convUint32, true
		}
	case parquet.Types.Int64:
		if plain {
			return convInt64, true
		}
		if it, ok := lt.(schema.IntLogicalType); ok {
			if it.IsSigned() {
				return convInt64, true
			}
			return convUint64, true
		}
	case parquet.Types.Float:
		if plain {
			return convFloat32, true
		}
	case parquet.Types.Double:
		if plain {
			return convFloat64, true
		}
	case parquet.Types.FixedLenByteArray:
		if _, ok := lt.(schema.Float16LogicalType); ok && n.TypeLength() == 2 {
			return convFloat16, true
		}
	case parquet.Types.ByteArray:
		switch lt.(type) {
		case schema.StringLogicalType, schema.EnumLogicalType:
			return convString, true
		}
	}
	return 0, false
}

func accepts(w want, c conv) bool {
	switch w {
	case wantIntOrString:
		return c.isInt() || c.isDec() || c == convString
	case wantInt:
		return c.isInt() || c.isDec()
	case wantNumber:
		return c.isInt() || c.isFloat() || c.isDec()
	}
	return false
}

// fieldNames lists the top-level field names of a schema, shortened for
// messages about very wide tables.
func fieldNames(sc *schema.Schema) string {
	root := sc.Root()
	n := root.NumFields()
	const show = 30
	names := make([]string, 0, min(n, show))
	for i := 0; i < n && i < show; i++ {
		names = append(names, root.Field(i).Name())
	}
	s := strings.Join(names, " ")
	if n > show {
		s += fmt.Sprintf(" ... (%d more)", n-show)
	}
	return "[" + s + "]"
}

// resolveColumn finds the top-level field name in sc and checks its type.
// It returns nil, nil when the column is absent and optional is set.
func resolveColumn(sc *schema.Schema, file, name string, w want, optional bool) (*colSpec, error) {
	root := sc.Root()
	fi := root.FieldIndexByName(name)
	if fi < 0 {
		if optional {
			return nil, nil
		}
		return nil, &traj.RowError{File: file, RowGroup: -1, Row: -1, Column: name,
			Msg: "missing: the file has columns " + fieldNames(sc), Err: ErrSchema}
	}
	node := root.Field(fi)
	typ := describeNode(node)
	mistyped := func() error {
		return &traj.RowError{File: file, RowGroup: -1, Row: -1, Column: name,
			Msg: fmt.Sprintf("has type %s, want %s", typ, w), Err: ErrSchema}
	}
	if w == wantFloatList {
		var leaf *schema.PrimitiveNode
		switch n := node.(type) {
		case *schema.GroupNode:
			leaf = singleLeaf(n)
		case *schema.PrimitiveNode:
			leaf = n // a repeated primitive is a list without annotation
		}
		if leaf == nil {
			return nil, mistyped()
		}
		idx := sc.ColumnIndexByNode(leaf)
		if idx < 0 {
			return nil, mistyped()
		}
		col := sc.Column(idx)
		c, ok := primitiveConv(leaf)
		if !ok || (c != convFloat32 && c != convFloat64) || col.MaxRepetitionLevel() != 1 {
			return nil, mistyped()
		}
		// The definition level at which the repeated node has an entry.
		var path []schema.Node
		for x := schema.Node(leaf); x != nil && x.Parent() != nil; x = x.Parent() {
			path = append(path, x)
		}
		var def, listDef int16
		for i := len(path) - 1; i >= 0; i-- {
			switch path[i].RepetitionType() {
			case parquet.Repetitions.Optional:
				def++
			case parquet.Repetitions.Repeated:
				def++
				listDef = def
			}
		}
		if listDef == 0 {
			return nil, mistyped()
		}
		return &colSpec{name: name, leaf: idx, conv: c, maxDef: col.MaxDefinitionLevel(), list: true, listDef: listDef, typ: typ}, nil
	}
	p, ok := node.(*schema.PrimitiveNode)
	if !ok || p.RepetitionType() == parquet.Repetitions.Repeated {
		return nil, mistyped()
	}
	c, ok := primitiveConv(p)
	if !ok || !accepts(w, c) {
		return nil, mistyped()
	}
	idx := sc.ColumnIndexByNode(p)
	if idx < 0 {
		return nil, mistyped()
	}
	col := sc.Column(idx)
	if col.MaxRepetitionLevel() != 0 {
		return nil, mistyped()
	}
	cs := &colSpec{name: name, leaf: idx, conv: c, maxDef: col.MaxDefinitionLevel(), typ: typ}
	if dt, ok := p.LogicalType().(schema.DecimalLogicalType); ok {
		cs.scale = dt.Scale()
	}
	return cs, nil
}

// layout is the contract resolved in one file.
type layout struct {
	site, traj, step, action, reward *colSpec // site is nil when it comes from the path
	state                            []*colSpec
	// shift is added to every step decoded (traj.FirstStep.Shift).
	shift int64
	// anyNullable says that some column is nullable (colSpec.nullable).
	anyNullable bool
	hiveSite    string // the site from a site=X path component, when site is nil
}

// nullable says whether a null in some column marks its row missing.
func (l *layout) nullable() bool { return l.anyNullable }

// resolveLayout checks a file's schema against the contract.
func resolveLayout(sc *schema.Schema, file string, opts *traj.Options, cols traj.Columns, hiveSite string, hasHive bool) (*layout, error) {
	var l layout
	var err error
	if l.site, err = resolveColumn(sc, file, cols.Site, wantIntOrString, hasHive); err != nil {
		return nil, err
	}
	if l.site == nil {
		l.hiveSite = hiveSite
	}
	if l.traj, err = resolveColumn(sc, file, cols.Traj, wantIntOrString, false); err != nil {
		return nil, err
	}
	if l.step, err = resolveColumn(sc, file, cols.Step, wantInt, false); err != nil {
		return nil, err
	}
	if l.action, err = resolveColumn(sc, file, cols.Action, wantIntOrString, false); err != nil {
		return nil, err
	}
	if l.reward, err = resolveColumn(sc, file, cols.Reward, wantNumber, false); err != nil {
		return nil, err
	}
	if l.state, err = resolveState(sc, file, opts.State); err != nil {
		return nil, err
	}
	for _, c := range append([]*colSpec{l.action, l.reward}, l.state...) {
		if c.list {
			continue // a list state's nulls stay errors
		}
		c.nullHint = true
		c.nullable = opts.Nulls != traj.NullsError
		l.anyNullable = l.anyNullable || c.nullable
	}
	return &l, nil
}

func resolveState(sc *schema.Schema, file string, sp traj.StateSpec) ([]*colSpec, error) {
	if sp.List {
		if len(sp.Columns) != 1 {
			return nil, fmt.Errorf("parquetio: a list state needs exactly one column, got %d (%v)", len(sp.Columns), sp.Columns)
		}
		c, err := resolveColumn(sc, file, sp.Columns[0], wantFloatList, false)
		if err != nil {
			return nil, err
		}
		return []*colSpec{c}, nil
	}
	out := make([]*colSpec, len(sp.Columns))
	for j, name := range sp.Columns {
		c, err := resolveColumn(sc, file, name, wantNumber, false)
		if err != nil {
			return nil, err
		}
		out[j] = c
	}
	return out, nil
}
