<?php
// A Pet Store (interface document v1.0.0) for PHP's built-in server: `php -S 127.0.0.1:PORT router.php`.
//
// Written as a PHP shop would write it from the interface document. The built-in server runs this
// script once per request, so the animals live in a JSON file (BLIND4_STATE/pets.json) under flock.
// BLIND4_FLAGS (comma-separated) switches a vendor's choice or one fault on; grep a flag's name to find
// what it changes. The key is PETSTORE_API_KEY; BLIND4_PRELOAD animals are put in the store first.
declare(strict_types=1);

const STATUSES = ['available', 'pending', 'sold'];
const DEFAULT_LIMIT = 20;
const MAX_LIMIT = 100;
// §4.3 / §9.3: deprecated since 1 July 2024 (RFC 9745 sf-date), removed on 5 December 2030 (RFC 8594).
const DEPRECATION = '@1719792000';
const SUNSET = 'Thu, 05 Dec 2030 00:00:00 GMT';

$FLAGS = array_fill_keys(array_filter(explode(',', (string) getenv('BLIND4_FLAGS'))), true);

function flag(string $name): bool
{
    global $FLAGS;
    return isset($FLAGS[$name]);
}

function send(int $status, $body, array $headers = []): void
{
    http_response_code($status);
    header('Content-Type: application/json');
    foreach ($headers as $name => $value) {
        header("$name: $value");
    }
    echo json_encode($body, JSON_UNESCAPED_SLASHES | JSON_THROW_ON_ERROR);
}

// §7: every error answer is the Error body, its status repeating the HTTP status.
function fail(int $status, string $code, string $message, array $headers = []): void
{
    send($status, ['code' => $code, 'message' => $message, 'status' => $status], $headers);
}

// §5: the bearer key; 401 with the Error body and a Bearer challenge (RFC 9110 §11.6.1, RFC 6750 §3).
function authorized(string $key): bool
{
    if (flag('header_case')) {
        // FAULT header_case: getallheaders() keeps each name as the client spelled it, and the lookup is
        // an exact array key; `authorization: Bearer <key>` is not found (breaks §5.2 and RFC 9110 §5.1:
        // field names are case-insensitive).
        $header = getallheaders()['Authorization'] ?? null;
    } else {
        $header = $_SERVER['HTTP_AUTHORIZATION'] ?? null; // the server folds the name's case
    }
    if ($header === null) {
        fail(401, 'unauthorized', 'API key missing', ['WWW-Authenticate' => 'Bearer realm="petstore"']);
        return false;
    }
    // RFC 9110 §11.1: a case-insensitive scheme token, then the token68
    $ok = preg_match('/^([!#$%&\'*+.^_`|~0-9A-Za-z-]+) +(\S+) *$/D', $header, $m) === 1
        && strtolower($m[1]) === 'bearer' && hash_equals($key, $m[2]);
    if (!$ok) {
        fail(401, 'unauthorized', 'API key not valid', ['WWW-Authenticate' => 'Bearer realm="petstore", error="invalid_token"']);
    }
    return $ok;
}

/** The store: read under a shared lock, changed under an exclusive one. */
function with_store(bool $write, callable $work)
{
    $dir = (string) getenv('BLIND4_STATE');
    $lock = fopen("$dir/pets.lock", 'c');
    flock($lock, $write ? LOCK_EX : LOCK_SH);
    try {
        $file = "$dir/pets.json";
        $store = is_file($file) ? json_decode(file_get_contents($file), true, 512, JSON_THROW_ON_ERROR) : null;
        if ($store === null) {
            $store = ['next' => 1, 'pets' => []];
            $names = ['Rex', 'Bella', 'Milo', 'Luna', 'Charlie', 'Nala', 'Oscar', 'Coco', 'Pepper', 'Ziggy'];
            $categories = [1, 2, 3, 7, 12, 42, 100, 2024];
            for ($i = 0; $i < (int) getenv('BLIND4_PRELOAD'); $i++) {
                $name = $names[$i % 10] . ' ' . ($i + 1);
                $store['pets'][] = ['id' => $store['next']++, 'name' => $name, 'categoryId' => $categories[$i * 5 % 8], 'status' => STATUSES[$i % 3]];
            }
            $write = true;
        }
        $result = $work($store);
        if ($write) {
            file_put_contents("$file.tmp", json_encode($store, JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE | JSON_THROW_ON_ERROR));
            rename("$file.tmp", $file);
        }
        return $result;
    } finally {
        flock($lock, LOCK_UN);
        fclose($lock);
    }
}

// §4.1 / §8 give the bounds; the answer to a value outside them is not shown: 400 Error.
function list_pets(): void
{
    $limit = DEFAULT_LIMIT;
    if (isset($_GET['limit'])) {
        $raw = $_GET['limit'];
        if (!is_string($raw) || preg_match('/^[0-9]{1,3}$/D', $raw) !== 1 || (int) $raw < 1 || (int) $raw > MAX_LIMIT) {
            fail(400, 'invalid_query', 'limit must be an integer from 1 to 100');
            return;
        }
        $limit = (int) $raw;
    }
    if (flag('page_cap_50')) {
        $limit = min($limit, 50); // §4.1: limit is a maximum; this vendor serves pages of at most 50
    }
    $status = $_GET['status'] ?? null;
    if ($status !== null && !in_array($status, STATUSES, true)) {
        fail(400, 'invalid_query', 'status must be one of available, pending, sold');
        return;
    }
    $pets = with_store(false, fn (array $store) => $store['pets']);
    if (flag('page_cap_50')) {
        $pets = array_reverse($pets); // newest first
    }
    $page = [];
    foreach ($pets as $pet) {
        if ($status === null || ($pet['status'] ?? null) === $status) {
            $page[] = $pet;
            if (count($page) === $limit) {
                break;
            }
        }
    }
    send(200, $page);
}

/** Why the decoded body is not a NewPet (§2, §4.2), or null. */
function new_pet_problem($body): ?string
{
    if (!$body instanceof stdClass) {
        return 'the body must be a JSON object (NewPet)';
    }
    foreach (['name', 'categoryId'] as $field) {
        if (!property_exists($body, $field)) {
            return "$field is required";
        }
    }
    if (!is_string($body->name)) {
        return 'name must be a string';
    }
    $category = $body->categoryId;
    if (flag('numeric_category')) {
        // FAULT numeric_category: is_numeric() and a cast: 7.5, "12" and 1e3 are category ids
        // (breaks §2: categoryId is an integer, int64).
        if (!is_numeric($category)) {
            return 'categoryId must be a number';
        }
        $body->categoryId = (int) $category;
    } elseif (!is_int($category)) { // json_decode gives a float beyond int64 or with a fraction or exponent
        return 'categoryId must be an integer (int64)';
    }
    if (flag('loose_status')) {
        // FAULT loose_status: isset() skips a null status and in_array() compares loosely, so `true`
        // equals every non-empty string (breaks §2: status is a PetStatus).
        if (isset($body->status) && !in_array($body->status, STATUSES)) {
            return 'status must be one of available, pending, sold';
        }
    } elseif (property_exists($body, 'status') && !in_array($body->status, STATUSES, true)) {
        return 'status must be one of available, pending, sold';
    }
    return null;
}

function create_pet(): void
{
    if (flag('strict_media_type')) {
        // §1: bodies are application/json; another media type gets 415 (RFC 9110 §15.5.16)
        $media = strtolower(trim(explode(';', $_SERVER['CONTENT_TYPE'] ?? '')[0]));
        if ($media !== 'application/json') {
            fail(415, 'unsupported_media_type', 'send the NewPet as application/json');
            return;
        }
    }
    try {
        $body = json_decode(file_get_contents('php://input'), false, 512, JSON_THROW_ON_ERROR);
    } catch (JsonException $e) {
        fail(400, 'invalid_json', 'the body is not JSON: ' . $e->getMessage());
        return;
    }
    if (flag('status_after_insert')) {
        // FAULT status_after_insert: the row is inserted first and its status set after, by a step that
        // validates it; a bad status answers 400 and the animal stays, without a status (breaks §4.2/§7:
        // a refused create creates nothing).
        $status = is_object($body) && property_exists($body, 'status') ? [$body->status] : [];
        $problem = new_pet_problem(is_object($body) ? (object) array_diff_key(get_object_vars($body), ['status' => 0]) : $body);
        if ($problem !== null) {
            fail(400, 'invalid_body', $problem);
            return;
        }
        unset($body->status);
        $pet = with_store(true, fn (array &$store) => insert($store, $body));
        if ($status && !in_array($status[0], STATUSES, true)) {
            fail(400, 'invalid_body', 'status must be one of available, pending, sold');
            return;
        }
        if ($status) {
            $pet = with_store(true, function (array &$store) use ($pet, $status) {
                foreach ($store['pets'] as &$row) {
                    if ($row['id'] === $pet['id']) {
                        $row['status'] = $status[0];
                        return $row;
                    }
                }
            });
        }
        send(201, $pet);
        return;
    }
    $problem = new_pet_problem($body);
    if ($problem !== null) {
        fail(400, 'invalid_body', $problem);
        return;
    }
    send(201, with_store(true, fn (array &$store) => insert($store, $body)));
}

function insert(array &$store, stdClass $body): array
{
    $pet = ['id' => $store['next']++, 'name' => $body->name, 'categoryId' => $body->categoryId];
    if (property_exists($body, 'status') && $body->status !== null) {
        $pet['status'] = $body->status;
    } elseif (flag('page_cap_50')) {
        $pet['status'] = 'available'; // §3: the value of an omitted status is not shown; this vendor picks one
    }
    $store['pets'][] = $pet;
    return $pet;
}

function read_pet(string $raw): void
{
    // the answers of the deprecated operation, 404s included, carry its deprecation (RFC 9745, RFC 8594)
    $headers = ['Deprecation' => DEPRECATION, 'Sunset' => SUNSET];
    if (flag('hex_octal_ids')) {
        // FAULT hex_octal_ids: filter_var with the hex and octal flags reads 0x1f, 012 and 0o12 as ids
        // (breaks §4.3: petId is an int64, written in decimal).
        $id = filter_var($raw, FILTER_VALIDATE_INT, FILTER_FLAG_ALLOW_HEX | FILTER_FLAG_ALLOW_OCTAL);
    } else {
        $id = filter_var($raw, FILTER_VALIDATE_INT);
    }
    $pets = $id === false ? [] : with_store(false, fn (array $store) => $store['pets']);
    foreach ($pets as $pet) {
        if ($pet['id'] === $id) {
            send(200, $pet, $headers);
            return;
        }
    }
    fail(404, 'not_found', 'no animal has this id', $headers);
}

function not_allowed(string $allow): void
{
    // §4.4: other operations are not shown; RFC 9110 §15.5.6: 405 with Allow
    fail(405, 'method_not_allowed', "this path serves $allow", ['Allow' => $allow]);
}

function route(string $key): bool
{
    $method = $_SERVER['REQUEST_METHOD'];
    $path = parse_url($_SERVER['REQUEST_URI'], PHP_URL_PATH) ?? '';
    $id = preg_match('#^/v1/pets/([^/]+)$#D', $path, $m) === 1 ? $m[1] : null;
    if (flag('strict_media_type') && $id !== null && preg_match('/^-?[0-9]+$/D', $id) !== 1) {
        // a petId that is no integer is a path no route serves: 404 before the key (RFC 9110 §15.5.5)
        fail(404, 'not_found', 'no such resource');
        return true;
    }
    $known = $path === '/v1/pets' || $path === '/v1/store/orders' || ($id !== null && preg_match('/^-?[0-9]+$/D', $id) === 1);
    if (flag('builtin_404') && !$known) {
        // FAULT builtin_404: no fallback route; `return false` hands the request to the built-in server,
        // whose 404 is an HTML page (breaks §7: every error answer is the Error body).
        return false;
    }
    if (!authorized($key)) {
        return true;
    }
    if ($path === '/v1/pets') {
        match ($method) {
            'GET', 'HEAD' => list_pets(),
            'POST' => create_pet(),
            default => not_allowed('GET, HEAD, POST'),
        };
    } elseif ($path === '/v1/store/orders') {
        $method === 'GET' || $method === 'HEAD' ? send(200, []) : not_allowed('GET, HEAD'); // §4.4: payloads not shown
    } elseif ($id !== null) {
        $method === 'GET' || $method === 'HEAD' ? read_pet($id) : not_allowed('GET, HEAD');
    } else {
        fail(404, 'not_found', 'no such resource');
    }
    return true;
}

return route((string) getenv('PETSTORE_API_KEY'));
