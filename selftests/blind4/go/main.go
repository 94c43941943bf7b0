// A Pet Store (interface document v1.0.0) on Go's net/http, standard library only.
//
// Written as a Go shop would write it from the interface document. One binary serves every Go entry of
// the round: BLIND4_FLAGS (comma-separated) switches a vendor's choice or one fault on; grep a flag's
// name to find what it changes. The key is PETSTORE_API_KEY, the store is BLIND4_PRELOAD animals
// (statuses taking turns), the port is the first argument (loopback only).
package main

import (
	"bytes"
	crand "crypto/rand"
	"crypto/subtle"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
)

const (
	maxBody      = 4 << 20 // 4 MiB: well above any NewPet; beyond it 413 with the Error body
	defaultLimit = 20
	maxLimit     = 100
	// §4.3 / §9.3: deprecated since 1 January 2024 (RFC 9745 sf-date), removed on 5 December 2030
	// (RFC 8594 wants an IMF-fixdate).
	deprecation = "@1704067200"
	sunset      = "Thu, 05 Dec 2030 00:00:00 GMT"
)

var (
	statuses = []string{"available", "pending", "sold"}
	// RFC 9110 §11.1: the scheme is a token compared case-insensitively, then the token68.
	authorization = regexp.MustCompile(`^([!#$%&'*+.^_` + "`" + `|~0-9A-Za-z-]+) +(\S+) *$`)
	jsonInteger   = regexp.MustCompile(`^-?(0|[1-9][0-9]*)$`)
	flags         = map[string]bool{}
)

// Pet: the fields hold decoded JSON values (a string, an int64, a json.Number), as the store keeps them.
type Pet struct {
	ID         int64 `json:"id"`
	Name       any   `json:"name"`
	CategoryID any   `json:"categoryId"`
	Status     any   `json:"status,omitempty"`
}

type store struct {
	mu    sync.Mutex
	pets  map[int64]*Pet
	order []int64 // creation order
	next  int64
}

func (s *store) nextID() int64 {
	if flags["random_ids"] {
		// ids the service draws at random in 1..2^63-1: unique, int64, assigned by the service (§2)
		for {
			var b [8]byte
			_, _ = crand.Read(b[:])
			id := int64(binary.BigEndian.Uint64(b[:]) >> 1)
			if _, taken := s.pets[id]; id > 0 && !taken {
				return id
			}
		}
	}
	s.next++
	return s.next
}

func (s *store) add(p Pet, keepID bool) Pet {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !keepID || p.ID == 0 {
		p.ID = s.nextID()
	}
	if _, exists := s.pets[p.ID]; !exists {
		s.order = append(s.order, p.ID)
	}
	stored := p
	s.pets[p.ID] = &stored
	return stored
}

func (s *store) get(id int64) (Pet, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.pets[id]
	if !ok {
		return Pet{}, false
	}
	return *p, true
}

func (s *store) page(limit int, status string) []Pet {
	s.mu.Lock()
	defer s.mu.Unlock()
	ids := append([]int64(nil), s.order...)
	if flags["random_ids"] {
		// newest first: the order of creation, reversed (the ids themselves carry no order)
		for i, j := 0, len(ids)-1; i < j; i, j = i+1, j-1 {
			ids[i], ids[j] = ids[j], ids[i]
		}
	} else {
		sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	}
	out := []Pet{}
	for _, id := range ids {
		p := s.pets[id]
		if status == "" || p.Status == status {
			out = append(out, *p)
			if len(out) == limit {
				break
			}
		}
	}
	return out
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// §7: every error answer is the Error body, its status repeating the HTTP status.
func writeError(w http.ResponseWriter, status int, code, message string) {
	writeJSON(w, status, map[string]any{"code": code, "message": message, "status": status})
}

// §5: the bearer key; 401 with the Error body and a Bearer challenge (RFC 9110 §11.6.1, RFC 6750 §3).
func authorized(w http.ResponseWriter, r *http.Request, key string) bool {
	header, sent := r.Header["Authorization"] // net/http canonicalises header names: any case arrives here
	if !sent {
		w.Header().Set("WWW-Authenticate", `Bearer realm="petstore"`)
		writeError(w, 401, "unauthorized", "API key missing")
		return false
	}
	m := authorization.FindStringSubmatch(header[0])
	if len(header) == 1 && m != nil && strings.EqualFold(m[1], "bearer") &&
		subtle.ConstantTimeCompare([]byte(m[2]), []byte(key)) == 1 {
		return true
	}
	w.Header().Set("WWW-Authenticate", `Bearer realm="petstore", error="invalid_token"`)
	writeError(w, 401, "unauthorized", "API key not valid")
	return false
}

func isStatus(s string) bool {
	for _, v := range statuses {
		if v == s {
			return true
		}
	}
	return false
}

// queryError: §4.1 gives the bounds; the answer to a value outside them is not shown. 400, or 422
// (RFC 9110 §15.5.21) for the typed_422 vendor.
func queryError(w http.ResponseWriter, message string) {
	if flags["typed_422"] {
		writeError(w, 422, "invalid_query", message)
		return
	}
	writeError(w, 400, "invalid_query", message)
}

func (s *store) list(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	limit := defaultLimit
	if raw, ok := q["limit"]; ok {
		n, err := strconv.Atoi(raw[0])
		if err != nil || !jsonInteger.MatchString(raw[0]) || n < 1 || n > maxLimit {
			queryError(w, "limit must be an integer from 1 to 100")
			return
		}
		limit = n
	}
	status := ""
	if raw, ok := q["status"]; ok {
		if !isStatus(raw[0]) {
			queryError(w, "status must be one of available, pending, sold")
			return
		}
		status = raw[0]
	}
	writeJSON(w, 200, s.page(limit, status))
}

func (s *store) create(w http.ResponseWriter, r *http.Request) {
	if flags["typed_422"] {
		// §1: bodies are application/json; another media type is refused (RFC 9110 §15.5.16)
		media := strings.TrimSpace(strings.Split(r.Header.Get("Content-Type"), ";")[0])
		if !strings.EqualFold(media, "application/json") {
			writeError(w, 415, "unsupported_media_type", "send the NewPet as application/json")
			return
		}
	}
	raw, err := readBody(w, r)
	if err != nil {
		return
	}
	pet, problem := decodeNewPet(raw)
	if problem != "" {
		writeError(w, 400, "invalid_body", problem)
		return
	}
	keepID := false
	if flags["id_kept"] {
		// FAULT id_kept: the body is decoded into the Pet itself and an id is assigned only when the
		// client sent none (breaks §2 "id ... assigned by the service on creation").
		var sent Pet
		if json.Unmarshal(raw, &sent) == nil && sent.ID != 0 {
			pet.ID, keepID = sent.ID, true
		}
	}
	if pet.Status == nil && flags["typed_422"] {
		pet.Status = "available" // §3: the value of an omitted status is not shown; this vendor picks one
	}
	writeJSON(w, 201, s.add(pet, keepID))
}

func readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	var buf bytes.Buffer
	_, err := buf.ReadFrom(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		writeError(w, 413, "payload_too_large", "the body exceeds 4 MiB")
	}
	return buf.Bytes(), err
}

func (s *store) read(w http.ResponseWriter, r *http.Request, rawID string) {
	var id int64
	var err error
	if flags["parseint_base0"] {
		// FAULT parseint_base0: base 0 lets ParseInt read 0x1f, 0o17, 0b11, 1_0 and a leading-zero
		// octal as ids (breaks §4.3: petId is an int64, written in decimal).
		id, err = strconv.ParseInt(rawID, 0, 64)
	} else {
		id, err = strconv.ParseInt(rawID, 10, 64)
	}
	// the answers of the deprecated operation, 404s included, carry its deprecation (RFC 9745, RFC 8594)
	w.Header().Set("Deprecation", deprecation)
	w.Header().Set("Sunset", sunset)
	if err != nil {
		if flags["plain_404"] {
			// FAULT plain_404: net/http's own text/plain "404 page not found" (breaks §7's Error body)
			w.Header().Del("Deprecation")
			w.Header().Del("Sunset")
			http.NotFound(w, r)
			return
		}
		writeError(w, 404, "not_found", "no animal has this id")
		return
	}
	pet, ok := s.get(id)
	if !ok {
		writeError(w, 404, "not_found", "no animal has this id")
		return
	}
	writeJSON(w, 200, pet)
}

func notAllowed(w http.ResponseWriter, allow string) {
	// §4.4: other operations are not shown; RFC 9110 §15.5.6: 405 with Allow
	w.Header().Set("Allow", allow)
	writeError(w, 405, "method_not_allowed", "this path serves "+allow)
}

func (s *store) routes(key string) http.Handler {
	mux := http.NewServeMux()
	collection := func(w http.ResponseWriter, r *http.Request) {
		if !authorized(w, r, key) {
			return
		}
		switch r.Method {
		case http.MethodGet, http.MethodHead:
			s.list(w, r)
		case http.MethodPost:
			s.create(w, r)
		default:
			notAllowed(w, "GET, HEAD, POST")
		}
	}
	if !flags["subtree_redirect"] {
		mux.HandleFunc("/v1/pets", collection)
	}
	// FAULT subtree_redirect: only the subtree "/v1/pets/" is registered; ServeMux answers /v1/pets with
	// its own 301 to /v1/pets/ (breaks §4.1/§4.2: no 3xx in the Responses tables).
	mux.HandleFunc("/v1/pets/", func(w http.ResponseWriter, r *http.Request) {
		rawID := strings.TrimPrefix(r.URL.Path, "/v1/pets/")
		if rawID == "" && flags["subtree_redirect"] {
			collection(w, r)
			return
		}
		if !authorized(w, r, key) {
			return
		}
		if strings.Contains(rawID, "/") || rawID == "" {
			writeError(w, 404, "not_found", "no such resource")
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			notAllowed(w, "GET, HEAD")
			return
		}
		s.read(w, r, rawID)
	})
	mux.HandleFunc("/v1/store/orders", func(w http.ResponseWriter, r *http.Request) {
		if !authorized(w, r, key) {
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			notAllowed(w, "GET, HEAD")
			return
		}
		writeJSON(w, 200, []any{}) // §4.4: its payloads are not shown; no orders yet
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/v1/") && !authorized(w, r, key) {
			return
		}
		writeError(w, 404, "not_found", "no such resource")
	})
	return mux
}

func preload(s *store, n int) {
	names := []string{"Rex", "Bella", "Milo", "Luna", "Charlie", "Nala", "Oscar", "Coco", "Pepper", "Ziggy"}
	categories := []int64{1, 2, 3, 7, 12, 42, 100, 2024}
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("%s %d", names[i%len(names)], i+1)
		s.add(Pet{Name: name, CategoryID: categories[i*5%8], Status: statuses[i%3]}, false)
	}
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: petstore PORT")
		os.Exit(2)
	}
	key := os.Getenv("PETSTORE_API_KEY")
	if key == "" {
		fmt.Fprintln(os.Stderr, "PETSTORE_API_KEY is not set")
		os.Exit(2)
	}
	for _, f := range strings.Split(os.Getenv("BLIND4_FLAGS"), ",") {
		if f != "" {
			flags[f] = true
		}
	}
	s := &store{pets: map[int64]*Pet{}}
	n, _ := strconv.Atoi(os.Getenv("BLIND4_PRELOAD"))
	preload(s, n)
	server := &http.Server{Addr: "127.0.0.1:" + os.Args[1], Handler: s.routes(key)}
	if err := server.ListenAndServe(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
