#!/usr/bin/env perl
# A Pet Store (interface document v1.0.0) on Mojolicious::Lite:
#   perl app.pl daemon -m production -l http://127.0.0.1:PORT
#
# Written as a Perl shop would write it from the interface document. BLIND4_FLAGS (comma-separated)
# switches a vendor's choice or one fault on; grep a flag's name to find what it changes. The key is
# PETSTORE_API_KEY; BLIND4_PRELOAD animals (statuses taking turns) are in the store at start.
use Mojolicious::Lite -signatures;
use B ();
use Mojo::JSON qw(decode_json);
use Mojo::Util qw(secure_compare);

my %FLAGS = map { $_ => 1 } grep {length} split /,/, ($ENV{BLIND4_FLAGS} // '');
my @STATUSES = qw(available pending sold);
my $KEY = $ENV{PETSTORE_API_KEY} // die "PETSTORE_API_KEY is not set\n";
# §4.3 / §9.3: deprecated since 1 July 2025 (RFC 9745 sf-date), removed on 5 December 2030 (RFC 8594).
# The deprecation_param vendor adds a structured-field parameter to the Item (RFC 9651 §3.1.2).
my $DEPRECATION = $FLAGS{deprecation_param} ? '@1751328000;reason="use GET /pets"' : '@1751328000';
my $SUNSET = 'Thu, 05 Dec 2030 00:00:00 GMT';

# The animals, in memory: the daemon is one process answering one request at a time.
my (%pets, $next);
my @names = qw(Rex Bella Milo Luna Charlie Nala Oscar Coco Pepper Ziggy);
my @categories = (1, 2, 3, 7, 12, 42, 100, 2024);
for my $i (0 .. ($ENV{BLIND4_PRELOAD} // 0) - 1) {
  my $id = ++$next;
  $pets{$id} = {id => $id, name => "$names[$i % 10] " . ($i + 1), categoryId => $categories[$i * 5 % 8], status => $STATUSES[$i % 3]};
}

# §7: every error answer is the Error body, its status repeating the HTTP status.
helper error_body => sub ($c, $status, $code, $message) {
  $c->render(status => $status, json => {code => $code, message => $message, status => 0 + $status});
  return undef;
};

# The JSON type of a decoded value: Mojo::JSON gives numbers, strings and booleans apart, and Perl's
# flags keep them apart (read before anything uses the value in another context).
sub json_type ($v) {
  return 'null' unless defined $v;
  return 'boolean' if ref $v eq 'JSON::PP::Boolean';
  return lc ref $v if ref $v;
  my $flags = B::svref_2object(\$v)->FLAGS;
  return 'string' if $flags & B::SVp_POK;
  return 'number' unless $flags & B::SVp_IOK && !($flags & B::SVp_NOK);
  return $flags & B::SVf_IVisUV ? 'number' : 'integer';    # above 2^63-1: no int64
}

sub new_pet_problem ($body) {
  return 'the body must be a JSON object (NewPet)' unless json_type($body) eq 'hash';
  for my $field (qw(name categoryId)) {
    return "$field is required" unless exists $body->{$field};
  }
  return 'name must be a string' unless json_type($body->{name}) eq 'string';
  if ($FLAGS{regex_category}) {
    # FAULT regex_category: a pattern on the value; "12" and JSON true (stringified "1") match
    # (breaks §2: categoryId is an integer, int64).
    return 'categoryId must be an integer' unless defined $body->{categoryId} && $body->{categoryId} =~ /\A-?\d+\z/;
    $body->{categoryId} = 0 + $body->{categoryId};
  }
  elsif (json_type($body->{categoryId}) ne 'integer') {
    return 'categoryId must be an integer (int64)';
  }
  if ($FLAGS{truthy_status}) {
    # FAULT truthy_status: the check runs only for a true status; null and 0 pass unchecked
    # (breaks §2: status is a PetStatus).
    return 'status must be one of available, pending, sold' if $body->{status} && !grep { $_ eq $body->{status} } @STATUSES;
  }
  elsif (exists $body->{status}) {
    my $status = $body->{status};
    return 'status must be one of available, pending, sold'
      unless json_type($status) eq 'string' && grep { $_ eq $status } @STATUSES;
  }
  return undef;
}

# §5: the bearer key; 401 with the Error body and a Bearer challenge (RFC 9110 §11.6.1, RFC 6750 §3).
under '/v1' => sub ($c) {
  my $header = $c->req->headers->authorization;    # Mojo::Headers folds the name's case
  my $problem = !defined $header ? 'missing' : 'invalid';
  if (defined $header && $header =~ /\A([!#\$%&'*+.^_`|~0-9A-Za-z-]+) +(\S+) *\z/) {
    return 1 if lc $1 eq 'bearer' && secure_compare($2, $KEY);
  }
  my $challenge = $problem eq 'missing' ? 'Bearer realm="petstore"' : 'Bearer realm="petstore", error="invalid_token"';
  $c->res->headers->www_authenticate($challenge);
  return $c->error_body(401, 'unauthorized', $problem eq 'missing' ? 'API key missing' : 'API key not valid');
};

get '/pets' => sub ($c) {
  my $limit = $c->param('limit') // 20;
  if ($FLAGS{clamp_limit} && $limit =~ /\A-?[0-9]{1,20}\z/) {
    # §4.1 gives the bounds, not the answer outside them: this vendor serves the nearest page size
    $limit = $limit < 1 ? 1 : $limit > 100 ? 100 : $limit;
  }
  return $c->error_body(400, 'invalid_query', 'limit must be an integer from 1 to 100')
    unless $limit =~ /\A[0-9]{1,3}\z/ && $limit >= 1 && $limit <= 100;
  my $status = $c->param('status');
  return $c->error_body(400, 'invalid_query', 'status must be one of available, pending, sold')
    if defined $status && !grep { $_ eq $status } @STATUSES;
  my @page = grep { !defined $status || ($_->{status} // '') eq $status } map { $pets{$_} } sort { $a <=> $b } keys %pets;
  $c->render(json => [@page[0 .. ($limit < @page ? $limit : @page) - 1]]);
};

post '/pets' => sub ($c) {
  my $body = eval { decode_json($c->req->body) };
  return $c->error_body(400, 'invalid_json', 'the body is not JSON') if $@;
  my $problem = new_pet_problem($body);
  return $c->error_body(400, 'invalid_body', $problem) if $problem;
  my $id = ++$next;
  my $pet = {id => $id, name => $body->{name}, categoryId => $body->{categoryId}};
  if (exists $body->{status} && defined $body->{status}) {
    $pet->{status} = $body->{status};
  }
  elsif ($FLAGS{deprecation_param}) {
    $pet->{status} = 'available';    # §3: the value of an omitted status is not shown; this vendor picks one
  }
  $pets{$id} = $pet;
  $c->render(status => 201, json => $pet);
};

# FAULT loose_numeric: the placeholder takes anything and the lookup compares numerically, so 12abc,
# 12.0 and 1.2e1 are animal 12 (breaks §4.3: petId is an int64).
my @id_rule = $FLAGS{loose_numeric} ? () : (id => qr/-?[0-9]+/);
get '/pets/:id' => [@id_rule] => sub ($c) {
  # the answers of the deprecated operation, 404s included, carry its deprecation (RFC 9745, RFC 8594)
  $c->res->headers->header(Deprecation => $DEPRECATION);
  $c->res->headers->header(Sunset => $SUNSET);
  my $raw = $c->param('id');
  no warnings 'numeric';
  my ($pet) = $FLAGS{loose_numeric} ? grep { $_->{id} == $raw } values %pets : ($pets{$raw} // ());
  return $c->error_body(404, 'not_found', 'no animal has this id') unless $pet;
  $c->render(json => $pet);
};

get '/store/orders' => sub ($c) { $c->render(json => []) };    # §4.4: payloads not shown; no orders yet

# §4.4: other operations are not shown; RFC 9110 §15.5.6: 405 with Allow
any [qw(PUT PATCH DELETE)] => '/pets' => sub ($c) {
  $c->res->headers->allow('GET, HEAD, POST');
  $c->error_body(405, 'method_not_allowed', 'this path serves GET, HEAD, POST');
};

# Mojolicious renders its own HTML pages for "not found" and exceptions; the vendor turns them into the
# Error body (the Rendering guide's before_render hook). FAULT html_404 leaves the hook out.
unless ($FLAGS{html_404}) {
  hook before_render => sub ($c, $args) {
    my $template = $args->{template} // '';
    if ($template eq 'not_found') {
      $args->{json} = {code => 'not_found', message => 'no such resource', status => 404};
    }
    elsif ($template eq 'exception') {
      $args->{json} = {code => 'internal_error', message => 'the service failed', status => 500};
    }
  };
}

app->start;
