package guest

import "testing"

// What the scanner reads must be what a full decode would: fields on a path, items, and one
// field of each item in one pass.
func TestRawFieldFollowsAPath(t *testing.T) {
	text := `{"normalisedParams":{"skip":{"x":"}"},"list":[1,{"b":"]"}]},"rawParams":{"list":2},"context":{"mode":"x"}}`
	cases := []struct {
		path []string
		want string
		ok   bool
	}{
		{[]string{"normalisedParams", "list"}, `[1,{"b":"]"}]`, true},
		{[]string{"normalisedParams", "skip", "x"}, `"}"`, true},
		{[]string{"rawParams", "list"}, `2`, true},
		{[]string{"context"}, `{"mode":"x"}`, true},
		{[]string{"normalisedParams", "missing"}, ``, false},
		{[]string{"context", "mode", "deeper"}, ``, false},
		{[]string{"toolResult"}, ``, false},
	}
	for _, c := range cases {
		got, ok := RawField(text, c.path...)
		if got != c.want || ok != c.ok {
			t.Errorf("RawField(%v) = %q, %v; want %q, %v", c.path, got, ok, c.want, c.ok)
		}
	}
}

func TestItemFieldsReadsWhatItemsAndRawFieldRead(t *testing.T) {
	text := ` [{"accountId":"0.0.1","amount":"5"}, {"amount":-1,"x":{"amount":9}} ,{},{"a":"}"},3,"s",{"amount":null},{"k":"a\"b","amount":"7"}] `
	type seen struct {
		value   string
		present bool
	}
	var fast, slow []seen
	if !ItemFields(text, "amount", func(v string, p bool) { fast = append(fast, seen{v, p}) }) {
		t.Fatal("ItemFields: not an array")
	}
	Items(text, func(item string) {
		v, p := RawField(item, "amount")
		slow = append(slow, seen{v, p})
	})
	if len(fast) != len(slow) || len(fast) != 8 {
		t.Fatalf("ItemFields saw %v, Items+RawField %v", fast, slow)
	}
	for i := range fast {
		if fast[i] != slow[i] {
			t.Errorf("item %d: ItemFields %v, Items+RawField %v", i, fast[i], slow[i])
		}
	}
	if fast[0] != (seen{`"5"`, true}) || fast[7] != (seen{`"7"`, true}) {
		t.Errorf("values: %v", fast)
	}
	if ItemFields(`{"a":1}`, "a", func(string, bool) {}) {
		t.Error("an object is not an array")
	}
	if ItemFields(`[{"a" 1}]`, "a", func(string, bool) { t.Error("called on invalid JSON") }) {
		t.Error("invalid JSON reads as an array")
	}
}
