package guest

// A small allocation-free JSON scanner for the hot path: find a field of an object, walk the
// items of an array, read a string, all on the params text the host sent, without decoding
// the rest (encoding/json into maps costs tens of µs per call in wasm). The host's JSON is
// well-formed; on anything unexpected these report "not found" rather than guess.

func skipSpace(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\n' || s[i] == '\t' || s[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index after the string that starts at s[i] == '"'.
func skipString(s string, i int) int {
	for i++; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return -1
}

// skipValue returns the index after the JSON value starting at i (or -1).
func skipValue(s string, i int) int {
	i = skipSpace(s, i)
	if i >= len(s) {
		return -1
	}
	switch s[i] {
	case '"':
		return skipString(s, i)
	case '{', '[':
		depth := 0
		for ; i < len(s); i++ {
			switch s[i] {
			case '"':
				i = skipString(s, i) - 1
				if i < 0 {
					return -1
				}
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
		}
		return -1
	default:
		for ; i < len(s); i++ {
			switch s[i] {
			case ',', '}', ']', ' ', '\n', '\t', '\r':
				return i
			}
		}
		return i
	}
}

// RawField returns the raw JSON of obj.path[0].path[1]… (objects only), or false. Only the
// fields before each key on the path are skipped: the objects on the way are not read to
// their end, and of the value found only its end is looked for.
func RawField(obj string, path ...string) (string, bool) {
	cur := obj
	for n, key := range path {
		i := skipSpace(cur, 0)
		if i >= len(cur) || cur[i] != '{' {
			return "", false
		}
		i++
		for {
			i = skipSpace(cur, i)
			if i >= len(cur) || cur[i] != '"' {
				return "", false
			}
			end := skipString(cur, i)
			if end < 0 {
				return "", false
			}
			name := cur[i+1 : end-1]
			i = skipSpace(cur, end)
			if i >= len(cur) || cur[i] != ':' {
				return "", false
			}
			vstart := skipSpace(cur, i+1)
			if name == key {
				if n < len(path)-1 {
					// The next key is looked for from the start of this value.
					cur = cur[vstart:]
				} else {
					vend := skipValue(cur, vstart)
					if vend < 0 {
						return "", false
					}
					cur = cur[vstart:vend]
				}
				break
			}
			vend := skipValue(cur, vstart)
			if vend < 0 {
				return "", false
			}
			i = skipSpace(cur, vend)
			if i >= len(cur) || cur[i] != ',' {
				return "", false
			}
			i++
		}
	}
	return cur, true
}

// Items calls f with the raw JSON of each item of an array; false if raw is not an array.
func Items(raw string, f func(item string)) bool {
	return eachItem(raw, func(s string, i int) int {
		end := skipValue(s, i)
		if end >= 0 {
			f(s[i:end])
		}
		return end
	})
}

// ItemFields calls f with the raw JSON of the key field of each item of an array (present
// false when the item has no such field or is not an object), reading each item once: Items
// and then RawField on each item read an object item twice. False if raw is not an array.
func ItemFields(raw, key string, f func(value string, present bool)) bool {
	return eachItem(raw, func(s string, i int) int {
		if s[i] != '{' {
			end := skipValue(s, i)
			if end >= 0 {
				f("", false)
			}
			return end
		}
		value, present := "", false
		i = skipSpace(s, i+1)
		if i < len(s) && s[i] == '}' {
			f("", false)
			return i + 1
		}
		for {
			if i >= len(s) || s[i] != '"' {
				return -1
			}
			end := skipString(s, i)
			if end < 0 {
				return -1
			}
			name := s[i+1 : end-1]
			i = skipSpace(s, end)
			if i >= len(s) || s[i] != ':' {
				return -1
			}
			vstart := skipSpace(s, i+1)
			vend := skipValue(s, vstart)
			if vend < 0 {
				return -1
			}
			if !present && name == key {
				value, present = s[vstart:vend], true
			}
			i = skipSpace(s, vend)
			if i >= len(s) {
				return -1
			}
			switch s[i] {
			case ',':
				i = skipSpace(s, i+1)
			case '}':
				f(value, present)
				return i + 1
			default:
				return -1
			}
		}
	})
}

// eachItem walks the items of an array: item reads the one starting at s[i] and returns the
// index after it (or -1 at invalid JSON, which ends the walk with false). False if raw is not
// an array.
func eachItem(raw string, item func(s string, i int) int) bool {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '[' {
		return false
	}
	i++
	for {
		i = skipSpace(raw, i)
		if i >= len(raw) || raw[i] == ']' {
			return true
		}
		end := item(raw, i)
		if end < 0 {
			return false
		}
		i = skipSpace(raw, end)
		if i < len(raw) && raw[i] == ',' {
			i++
		}
	}
}

// StringValue returns the contents of a raw JSON string without escapes, or false.
func StringValue(raw string) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", false
	}
	body := raw[1 : len(raw)-1]
	for i := 0; i < len(body); i++ {
		if body[i] == '\\' {
			return "", false
		}
	}
	return body, true
}
