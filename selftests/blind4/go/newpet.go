package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
)

// decodeNewPet reads a NewPet (§2, §4.2) the careful way: the body is one JSON object, each member
// looked up by its exact name (RFC 8259 §8.3: names compare code unit by code unit), each value of the
// JSON type the document gives it. An unknown member (a client's id) is ignored.
func decodeNewPet(raw []byte) (Pet, string) {
	if flags["struct_decode"] {
		return decodeIntoStruct(raw)
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(raw, &members); err != nil || members == nil {
		return Pet{}, "the body must be a JSON object (NewPet)"
	}
	checked := members
	if flags["validate_first_key"] || flags["duplicate_keys_refused"] {
		firsts, repeated, err := firstMembers(raw)
		if err != nil {
			return Pet{}, "the body must be a JSON object (NewPet)"
		}
		if repeated != "" && flags["duplicate_keys_refused"] {
			// RFC 8259 §4: names SHOULD be unique; this vendor refuses a body that repeats one
			return Pet{}, "member " + strconv.Quote(repeated) + " is given twice"
		}
		if flags["validate_first_key"] {
			// FAULT validate_first_key: the validator stops at a member's first occurrence while the
			// store keeps json.Unmarshal's last one (breaks §4.2: a body with an invalid value is 400).
			checked = firsts
		}
	}
	if problem := checkMembers(checked); problem != "" {
		return Pet{}, problem
	}
	return petOf(members), ""
}

func checkMembers(m map[string]json.RawMessage) string {
	var name string
	if raw, ok := m["name"]; !ok {
		return "name is required"
	} else if !isJSONString(raw) || json.Unmarshal(raw, &name) != nil {
		return "name must be a string"
	}
	raw, ok := m["categoryId"]
	if !ok {
		return "categoryId is required"
	}
	if _, err := int64Of(raw); err != nil {
		return "categoryId must be an integer (int64)"
	}
	if raw, ok := m["status"]; ok {
		var status string
		if !isJSONString(raw) || json.Unmarshal(raw, &status) != nil || !isStatus(status) {
			return "status must be one of available, pending, sold"
		}
	}
	return ""
}

// petOf: the stored fields, decoded from the members the store keeps (json.Unmarshal's: the last of a
// repeated name).
func petOf(m map[string]json.RawMessage) Pet {
	var pet Pet
	dec := func(raw json.RawMessage) any {
		if id, err := int64Of(raw); err == nil {
			return id
		}
		d := json.NewDecoder(bytes.NewReader(raw))
		d.UseNumber()
		var v any
		_ = d.Decode(&v)
		return v
	}
	pet.Name, pet.CategoryID = dec(m["name"]), dec(m["categoryId"])
	if raw, ok := m["status"]; ok {
		pet.Status = dec(raw)
	}
	return pet
}

func isJSONString(raw json.RawMessage) bool {
	return len(raw) > 0 && raw[0] == '"'
}

func int64Of(raw json.RawMessage) (int64, error) {
	if !jsonInteger.Match(raw) { // a JSON integer: no fraction, exponent, string, bool or null
		return 0, errors.New("not an integer")
	}
	return strconv.ParseInt(string(raw), 10, 64)
}

// firstMembers walks the object's tokens: each name's first value, and a name given twice.
func firstMembers(raw []byte) (map[string]json.RawMessage, string, error) {
	d := json.NewDecoder(bytes.NewReader(raw))
	if t, err := d.Token(); err != nil || t != json.Delim('{') {
		return nil, "", errors.New("not an object")
	}
	firsts, repeated := map[string]json.RawMessage{}, ""
	for d.More() {
		t, err := d.Token()
		if err != nil {
			return nil, "", err
		}
		name, _ := t.(string)
		var value json.RawMessage
		if err := d.Decode(&value); err != nil {
			return nil, "", err
		}
		if _, seen := firsts[name]; seen {
			if repeated == "" {
				repeated = name
			}
			continue
		}
		firsts[name] = value
	}
	return firsts, repeated, nil
}

// petStatus: a PetStatus member that refuses null and every value outside the enum.
type petStatus struct {
	set   bool
	value string
}

var errStatus = errors.New("status must be one of available, pending, sold")

func (p *petStatus) UnmarshalJSON(b []byte) error {
	if err := json.Unmarshal(b, &p.value); err != nil || !isJSONString(b) || !isStatus(p.value) {
		return errStatus
	}
	p.set = true
	return nil
}

// decodeIntoStruct: FAULT struct_decode. The NewPet goes into a typed struct, Go's idiom; encoding/json
// matches member names case-insensitively, so {"Name": ..., "CATEGORYID": ...} is a NewPet to it
// (breaks §2/§4.2: a body without `name` misses a required field; RFC 8259 §8.3).
func decodeIntoStruct(raw []byte) (Pet, string) {
	var in struct {
		Name       *string   `json:"name"`
		CategoryID *int64    `json:"categoryId"`
		Status     petStatus `json:"status"`
	}
	if err := json.Unmarshal(raw, &in); err != nil {
		if errors.Is(err, errStatus) {
			return Pet{}, err.Error()
		}
		return Pet{}, "the body is not a NewPet: " + err.Error()
	}
	if in.Name == nil || in.CategoryID == nil {
		return Pet{}, "name and categoryId are required"
	}
	pet := Pet{Name: *in.Name, CategoryID: *in.CategoryID}
	if in.Status.set {
		pet.Status = in.Status.value
	}
	return pet, ""
}
