# A Pet Store (interface document v1.0.0) on Sinatra 3, served by WEBrick: `ruby app.rb PORT`.
#
# Written as a Ruby shop would write it from the interface document. BLIND4_FLAGS (comma-separated)
# switches a vendor's choice or one fault on; grep a flag's name to find what it changes. The key is
# PETSTORE_API_KEY; BLIND4_PRELOAD animals (statuses taking turns) are in the store at start.
require 'json'
require 'rack/utils'
require 'sinatra/base'
require 'webrick'

FLAGS = ENV.fetch('BLIND4_FLAGS', '').split(',').to_h { |f| [f, true] }
STATUSES = %w[available pending sold].freeze
INT64 = (-2**63..2**63 - 1).freeze
# §4.3 / §9.3: deprecated since 1 January 2025 (RFC 9745 sf-date), removed on 5 December 2030 (RFC 8594).
DEPRECATION = '@1735689600'
SUNSET = 'Thu, 05 Dec 2030 00:00:00 GMT'
# RFC 9110 §11.1: a case-insensitive scheme token, then the token68
AUTHORIZATION = /\A([!#$%&'*+.^_`|~0-9A-Za-z-]+) +(\S+) *\z/

# The animals, in memory behind a mutex (WEBrick answers each connection in a thread of its own).
class Store
  def initialize(preload)
    @lock = Mutex.new
    @pets = {}
    @next = 0
    names = %w[Rex Bella Milo Luna Charlie Nala Oscar Coco Pepper Ziggy]
    categories = [1, 2, 3, 7, 12, 42, 100, 2024]
    preload.times do |i|
      add('name' => "#{names[i % 10]} #{i + 1}", 'categoryId' => categories[i * 5 % 8], 'status' => STATUSES[i % 3])
    end
  end

  def add(fields)
    @lock.synchronize do
      pet = if FLAGS['merge_id']
              # FAULT merge_id: the body is merged over the new record, its "id" wins
              # (breaks §2: the id is assigned by the service on creation).
              { 'id' => (@next += 1) }.merge(fields)
            else
              { 'id' => (@next += 1) }.merge(fields.slice('name', 'categoryId', 'status'))
            end
      @pets[pet['id']] = pet
    end
  end

  def get(id)
    @lock.synchronize { @pets[id] }
  end

  def page(limit, status)
    @lock.synchronize { @pets.values.select { |p| status.nil? || p['status'] == status }.sort_by { |p| p['id'] }.first(limit) }
  end
end

# The vendor's application.
class PetStore < Sinatra::Base
  set :environment, :production
  set :show_exceptions, false
  set :raise_errors, false
  set :store, Store.new(Integer(ENV.fetch('BLIND4_PRELOAD', '0'), 10))
  set :key, ENV.fetch('PETSTORE_API_KEY')

  helpers do
    # §7: every error answer is the Error body, its status repeating the HTTP status.
    def error_body(status, code, message)
      content_type :json
      halt status, JSON.generate('code' => code, 'message' => message, 'status' => status)
    end

    def json(status, body)
      content_type :json
      [status, JSON.generate(body)]
    end

    # §5: the bearer key; 401 with the Error body and a Bearer challenge (RFC 9110 §11.6.1, RFC 6750 §3).
    def authenticate!
      header = request.env['HTTP_AUTHORIZATION'] # Rack folds the name's case
      if header.nil?
        headers 'WWW-Authenticate' => 'Bearer realm="petstore"'
        error_body 401, 'unauthorized', 'API key missing'
      end
      m = AUTHORIZATION.match(header)
      return if m && m[1].casecmp?('bearer') && Rack::Utils.secure_compare(m[2], settings.key)

      headers 'WWW-Authenticate' => 'Bearer realm="petstore", error="invalid_token"'
      error_body 401, 'unauthorized', 'API key not valid'
    end

    # §4.1 / §8 give the bounds; the answer outside them is not shown: 400, or 422 (RFC 9110 §15.5.21).
    def query_error(message)
      error_body(FLAGS['query_422'] ? 422 : 400, 'invalid_query', message)
    end

    def new_pet_problem(body)
      return 'the body must be a JSON object (NewPet)' unless body.is_a?(Hash)
      return 'name is required' unless body.key?('name')
      return 'categoryId is required' unless body.key?('categoryId')
      return 'name must be a string' unless body['name'].is_a?(String)
      # JSON.parse gives an Integer only for a JSON integer (a Float for 7.0 or 1e3; true is no Integer)
      return 'categoryId must be an integer (int64)' unless body['categoryId'].is_a?(Integer) && INT64.cover?(body['categoryId'])
      return 'status must be one of available, pending, sold' if body.key?('status') && !STATUSES.include?(body['status'])

      nil
    end
  end

  before do
    if FLAGS['slash_308'] && ['/v1/pets', '/v1/store/orders'].include?(request.path_info)
      # FAULT slash_308: the routes were declared with a trailing slash, and a filter sends the documented
      # paths there with 308 (breaks §4.1/§4.2: their Responses tables hold no redirect).
      redirect to("#{request.path_info}/"), 308
    end
    if FLAGS['slash_redirect'] && request.path_info == '/v1/pets/'
      # an undescribed path with a trailing slash goes to the documented one (RFC 9110 §15.4.9)
      redirect to('/v1/pets'), 308
    end
    authenticate! if request.path_info.start_with?('/v1/')
  end

  collection = FLAGS['slash_308'] ? '/v1/pets/' : '/v1/pets'

  get collection do
    limit = 20
    if params.key?('limit')
      raw = params['limit']
      valid = raw.is_a?(String) && raw.match?(/\A[0-9]{1,3}\z/) && (1..100).cover?(Integer(raw, 10))
      query_error 'limit must be an integer from 1 to 100' unless valid
      limit = Integer(raw, 10)
    end
    status = params['status']
    query_error 'status must be one of available, pending, sold' unless status.nil? || STATUSES.include?(status)
    json 200, settings.store.page(limit, status)
  end

  post collection do
    raw = request.body.read.force_encoding(Encoding::UTF_8)
    # RFC 8259 §8.1: JSON text is UTF-8. Ruby's parser copies other bytes into its strings, which the
    # generator then refuses (a 500 on the answer). FAULT utf8_unchecked leaves the check out, and so does
    # the vendor of FAULT quote_parser_error, who leaves bad bytes to the parser.
    unchecked = FLAGS['utf8_unchecked'] || FLAGS['quote_parser_error']
    error_body 400, 'invalid_json', 'the body is not UTF-8' unless raw.valid_encoding? || unchecked
    begin
      body = JSON.parse(raw)
    rescue JSON::ParserError => e
      # FAULT json_500: the parse error is not rescued; Sinatra's own 500 page answers
      # (breaks §4.2/§7: a body that is not JSON is a 400 Error).
      raise if FLAGS['json_500']
      # FAULT quote_parser_error: no UTF-8 check, and the 400 quotes the parser's excerpt of the body; bytes
      # that are not UTF-8 make JSON.generate fail on the Error body itself, a 500 (breaks §4.2/§7).
      error_body 400, 'invalid_json', "the body is not JSON: #{e.message[0, 80]}" if FLAGS['quote_parser_error']

      error_body 400, 'invalid_json', 'the body is not JSON' # no excerpt: it may hold bytes that are not UTF-8
    end
    problem = new_pet_problem(body)
    error_body 400, 'invalid_body', problem if problem
    json 201, settings.store.add(body)
  end

  get '/v1/store/orders' do
    json 200, [] # §4.4: its payloads are not shown; no orders yet
  end

  pet_path = FLAGS['integer_petid'] ? %r{/v1/pets/([^/]+)} : %r{/v1/pets/(-?[0-9]+)}
  get pet_path do |raw|
    # the answers of the deprecated operation, 404s included, carry its deprecation (RFC 9745, RFC 8594)
    headers 'Deprecation' => DEPRECATION, 'Sunset' => SUNSET
    # FAULT integer_petid: Kernel#Integer reads 0x1f, 0b11, 0o17, 1_0 and 012 (octal) as integers
    # (breaks §4.3: petId is an int64, written in decimal).
    id = FLAGS['integer_petid'] ? Integer(raw, exception: false) : Integer(raw, 10)
    pet = id && settings.store.get(id)
    error_body 404, 'not_found', 'no animal has this id' unless pet
    json 200, pet
  end

  unless FLAGS['html_404']
    # FAULT html_404 leaves this handler out: Sinatra's own HTML 404 page (breaks §7's Error body).
    not_found do
      error_body 404, 'not_found', 'no such resource' unless response.body.join.start_with?('{')
    end
  end

  unless FLAGS['json_500']
    error do
      error_body 500, 'internal_error', 'the service failed'
    end
  end
end

PetStore.run!(bind: '127.0.0.1', port: Integer(ARGV.fetch(0), 10), server: 'webrick', quiet: true,
              server_settings: { AccessLog: [], Logger: WEBrick::Log.new(nil, 0) })
