// server — nested regions, as in Apache (2002 paper Tables 1–3 and §8, the
// reap slides' Apache/bc example): a simulated HTTP server. A few keep-alive
// connections are open at once and served round robin, one request at a
// time. Each connection has a region (Apache's c->pool) that holds what lives
// as long as the connection: the raw bytes read from the client (its input
// buffers) and the access-log lines. Each request gets a child region
// (r->pool) for the parsed request line, the headers table, the query and
// cookie tables, the CGI-style environment, the file or upload being handled
// and the response being built; it is destroyed when the response is sent.
//
// The requests are generated from the seed: GETs of static files (2–42 KB),
// GETs of a small API (query parsing, header echo, CGI environment) and POSTs
// of 8–64 KB bodies, with a dozen headers each.
//
// Modes:
//   custom  Apache-like pools: NestedRegionHeap<ZoneHeap<8 KB chunks, malloc>>,
//           connection pools children of the server pool, request pools
//           children of their connection's; nothing is freed individually;
//   naive   MallocRegion per connection and per request: every object its own
//           malloc block, freed when the region is ("reduce chunk size to fit
//           single objects", 2026 Table 4);
//   reap    the same nesting with strata reaps, and the big temporaries freed
//           as soon as they are dead — the raw input once the request is
//           handled, a file once copied, an upload once digested, a growing
//           buffer's old copy, the response once sent — so a long connection
//           no longer keeps every request body it ever read (the 2002 paper's
//           point: 7.4 MB against 240 KB for bc). Compare peak RSS.
// The checksum digests every response, in the order they are sent.
#include <algorithm>
#include <cctype>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <strata/layers.hpp>
#include <strata/reap.hpp>

#include "regions.hpp"
#include "workload.hpp"

namespace {

using strata::workload::Checksum;
using strata::workload::Options;
using strata::workload::Rng;

constexpr std::uint64_t kConnectionsPerScale = 10;
constexpr int kOpenConnections = 4;
constexpr int kMaxRequestsPerConnection = 200;

// ---- the allocator policies ------------------------------------------------

// custom: APR-style nested pools; naive: one malloc per object; reap: nested
// reaps, dead temporaries freed at once.
using PoolRegion = strata::workload::LayerRegion<
    strata::layers::NestedRegionHeap<strata::layers::ZoneHeap<8192, strata::layers::MallocHeap>>>;
using strata::workload::MallocRegion;
using strata::workload::ReapRegion;

// ---- pool-allocated strings, buffers and tables (APR's pstrdup, tables) ----

template <class P>
struct Pool {
  P& region;

  void* allocate(std::size_t n) { return strata::workload::allocate_or_throw(region, n); }
  void release(void* p) { region.release(p); }
  const char* strdup(std::string_view s) {
    auto* p = static_cast<char*>(allocate(s.size() + 1));
    std::memcpy(p, s.data(), s.size());
    p[s.size()] = '\0';
    return p;
  }
  const char* lowercase(std::string_view s) {
    auto* p = const_cast<char*>(strdup(s));
    for (char* c = p; *c; ++c) *c = static_cast<char>(std::tolower(static_cast<unsigned char>(*c)));
    return p;
  }
};

// A byte buffer in a pool that doubles when full (the old copy is dead).
template <class P>
class Buffer {
 public:
  Buffer(Pool<P> pool, std::size_t capacity) : pool_(pool), data_(static_cast<char*>(pool_.allocate(capacity))),
                                                capacity_(capacity) {}
  void append(std::string_view s) {
    if (size_ + s.size() > capacity_) {
      std::size_t capacity = capacity_ * 2;
      while (capacity < size_ + s.size()) capacity *= 2;
      auto* data = static_cast<char*>(pool_.allocate(capacity));
      std::memcpy(data, data_, size_);
      pool_.release(data_);
      data_ = data;
      capacity_ = capacity;
    }
    std::memcpy(data_ + size_, s.data(), s.size());
    size_ += s.size();
  }
  void append_number(std::uint64_t v) {
    char digits[24];
    const int n = std::snprintf(digits, sizeof digits, "%llu", static_cast<unsigned long long>(v));
    append(std::string_view(digits, static_cast<std::size_t>(n)));
  }
  std::string_view view() const { return {data_, size_}; }
  void release() { pool_.release(data_); }

 private:
  Pool<P> pool_;
  char* data_;
  std::size_t size_ = 0, capacity_;
};

// apr_table_t: an array of key/value entries in a pool, searched linearly.
template <class P>
class Table {
 public:
  explicit Table(Pool<P> pool) : pool_(pool) {}
  void add(const char* key, const char* value) {
    if (size_ == capacity_) {
      const std::size_t capacity = capacity_ == 0 ? 8 : capacity_ * 2;
      auto* entries = static_cast<Entry*>(pool_.allocate(capacity * sizeof(Entry)));
      if (size_ != 0) std::memcpy(entries, entries_, size_ * sizeof(Entry));
      if (entries_ != nullptr) pool_.release(entries_);
      entries_ = entries;
      capacity_ = capacity;
    }
    entries_[size_++] = Entry{key, value};
  }
  const char* get(std::string_view key) const {
    for (std::size_t i = 0; i < size_; ++i)
      if (key == entries_[i].key) return entries_[i].value;
    return nullptr;
  }
  std::size_t size() const { return size_; }
  const char* key(std::size_t i) const { return entries_[i].key; }
  const char* value(std::size_t i) const { return entries_[i].value; }

 private:
  struct Entry {
    const char* key;
    const char* value;
  };
  Pool<P> pool_;
  Entry* entries_ = nullptr;
  std::size_t size_ = 0, capacity_ = 0;
};

// ---- request generation: what the clients send ------------------------------

constexpr const char* kWords[] = {"alpha", "bravo", "charlie", "delta", "echo",    "foxtrot", "golf",  "hotel",
                                  "india", "juliet", "kilo",   "lima",  "mike",    "november", "oscar", "papa",
                                  "quebec", "romeo", "sierra", "tango", "uniform", "victor",  "whiskey", "xray"};
constexpr std::size_t kWordCount = sizeof kWords / sizeof kWords[0];
constexpr const char* kAgents[] = {"Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0",
                                   "curl/8.5.0", "Wget/1.21.4", "Mozilla/5.0 (Macintosh) AppleWebKit/605.1.15 Safari/605.1.15"};
constexpr const char* kApiOps[] = {"sum", "concat", "headers", "env"};

// Appends formatted text to a fixed stack buffer (the request head).
struct HeadWriter {
  char text[4096];
  std::size_t size = 0;
  __attribute__((format(printf, 2, 3))) void put(const char* format, ...) {
    va_list args;
    va_start(args, format);
    const int n = std::vsnprintf(text + size, sizeof text - size, format, args);
    va_end(args);
    size += static_cast<std::size_t>(n);
    if (size >= sizeof text) throw std::length_error("request head too long");
  }
};

// What the input filter read off the socket for one request: a chain of
// 8 KB blocks in the connection's pool (Apache's core input filter reads
// into 8000-byte heap buckets). The head is in the first block.
constexpr std::size_t kBlockBytes = 8192 - 16;
struct InputBlock {
  InputBlock* next;
  std::size_t size;
  char data[kBlockBytes];
};
struct RawRequest {
  InputBlock* first;
  std::size_t head_size, body_size;
  std::string_view head() const { return {first->data, head_size}; }
};

// 256 KB of text that uploads are cut from: words, spaces and newlines.
std::string make_corpus(Rng& rng) {
  std::string text;
  text.reserve(256 * 1024 + 16);
  while (text.size() < 256 * 1024) {
    const std::uint64_t r = rng.next();
    text += kWords[r % kWordCount];
    text += (r >> 32) % 8 == 0 ? '\n' : ' ';
  }
  return text;
}

// Generates one request (head and body) into new blocks of the connection's
// pool.
template <class P>
RawRequest read_request(Pool<P> connection, Rng& rng, std::string_view corpus, std::uint64_t id) {
  HeadWriter head;
  std::size_t body = 0;
  const std::uint64_t kind = rng.below(100);
  if (kind < 50) {
    head.put("GET /static/%s/%s%llu.html HTTP/1.1\r\n", kWords[rng.below(kWordCount)], kWords[rng.below(kWordCount)],
             static_cast<unsigned long long>(rng.below(300)));
  } else if (kind < 72) {
    head.put("GET /api/%s?x=%llu&y=%llu&name=%s&lang=%s HTTP/1.1\r\n", kApiOps[rng.below(4)],
             static_cast<unsigned long long>(rng.below(100000)), static_cast<unsigned long long>(rng.below(100000)),
             kWords[rng.below(kWordCount)], kWords[rng.below(kWordCount)]);
  } else if (kind < 97) {
    body = 8 * 1024 + rng.below(56 * 1024);
    head.put("POST /upload/%llu HTTP/1.1\r\n", static_cast<unsigned long long>(id));
  } else {
    head.put("GET /missing/%llu HTTP/1.1\r\n", static_cast<unsigned long long>(rng.below(1000)));
  }
  head.put("Host: www.%s.example\r\n", kWords[rng.below(kWordCount)]);
  head.put("User-Agent: %s\r\n", kAgents[rng.below(4)]);
  head.put("Accept: text/html,application/xhtml+xml;q=0.9,*/*;q=0.8\r\n");
  head.put("Accept-Language: en-US,en;q=0.5\r\nAccept-Encoding: gzip, deflate\r\nConnection: keep-alive\r\n");
  head.put("Cookie: session=%016llx", static_cast<unsigned long long>(rng.next()));
  for (std::uint64_t i = 0, n = rng.between(1, 6); i < n; ++i)
    head.put("; %s=%llu", kWords[rng.below(kWordCount)], static_cast<unsigned long long>(rng.below(1000000)));
  head.put("\r\nReferer: http://www.%s.example/%s\r\n", kWords[rng.below(kWordCount)], kWords[rng.below(kWordCount)]);
  head.put("X-Forwarded-For: 10.%llu.%llu.%llu\r\n", static_cast<unsigned long long>(rng.below(256)),
           static_cast<unsigned long long>(rng.below(256)), static_cast<unsigned long long>(rng.below(256)));
  for (std::uint64_t i = 0, n = rng.below(7); i < n; ++i)
    head.put("X-Custom-%llu: %s-%llu\r\n", static_cast<unsigned long long>(i), kWords[rng.below(kWordCount)],
             static_cast<unsigned long long>(rng.next() >> 40));
  if (body != 0) head.put("Content-Type: text/plain\r\nContent-Length: %zu\r\n", body);
  head.put("\r\n");
  static_assert(sizeof head.text <= kBlockBytes);

  auto new_block = [&] {
    auto* block = static_cast<InputBlock*>(connection.allocate(sizeof(InputBlock)));
    block->next = nullptr;
    block->size = 0;
    return block;
  };
  RawRequest raw{new_block(), head.size, body};
  std::memcpy(raw.first->data, head.text, head.size);
  raw.first->size = head.size;
  // The body: a stretch of the client's text (words, spaces, newlines),
  // block after block.
  InputBlock* last = raw.first;
  std::size_t from = body != 0 ? rng.below(corpus.size() - body) : 0;
  for (std::size_t left = body; left > 0;) {
    InputBlock* block = new_block();
    last = last->next = block;
    block->size = std::min(left, kBlockBytes);
    std::memcpy(block->data, corpus.data() + from, block->size);
    from += block->size;
    left -= block->size;
  }
  return raw;
}

// ---- request handling: what the server does ---------------------------------

struct RequestLine {
  std::string_view method, uri, version;
};

std::string_view next_line(std::string_view& text) {
  const std::size_t eol = text.find("\r\n");
  const std::string_view line = text.substr(0, eol);
  text.remove_prefix(eol == std::string_view::npos ? text.size() : eol + 2);
  return line;
}

// A fast 64-bit digest of a byte string, a word at a time (the byte-wise
// FNV of Checksum would cost more than serving the request).
std::uint64_t digest(std::string_view s) {
  std::uint64_t h = s.size() * 0x9E3779B97F4A7C15ULL;
  std::size_t i = 0;
  for (; i + 8 <= s.size(); i += 8) {
    std::uint64_t w;
    std::memcpy(&w, s.data() + i, 8);
    h = (h ^ w) * 0xD6E8FEB86659FD93ULL;
    h ^= h >> 32;
  }
  for (; i < s.size(); ++i) h = (h ^ static_cast<unsigned char>(s[i])) * 0x100000001b3ULL;
  return h;
}

// Splits "a=1&b=2" (or "a=1; b=2") into table entries copied into the pool.
template <class P>
void parse_pairs(Pool<P> pool, Table<P>& table, std::string_view text, char separator) {
  while (!text.empty()) {
    std::size_t end = text.find(separator);
    std::string_view pair = text.substr(0, end);
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
    while (!pair.empty() && pair.front() == ' ') pair.remove_prefix(1);
    const std::size_t eq = pair.find('=');
    if (eq == std::string_view::npos) continue;
    table.add(pool.strdup(pair.substr(0, eq)), pool.strdup(pair.substr(eq + 1)));
  }
}

template <class P>
class Server {
 public:
  explicit Server(std::uint64_t seed) : rng_(seed), corpus_(make_corpus(rng_)) {}

  std::uint64_t run(std::uint64_t connections) {
    struct Connection {
      explicit Connection(P& server) : region(server) {}
      P region;
      std::uint64_t id = 0;
      int remaining = 0;
      std::uint64_t log_bytes = 0;
    };
    std::vector<std::unique_ptr<Connection>> open;
    std::uint64_t opened = 0;
    auto open_one = [&] {
      auto c = std::make_unique<Connection>(server_region_);
      c->id = opened++;
      c->remaining = static_cast<int>(rng_.between(1, kMaxRequestsPerConnection));
      return c;
    };
    for (int i = 0; i < kOpenConnections && opened < connections; ++i) open.push_back(open_one());
    while (!open.empty()) {
      for (std::size_t i = 0; i < open.size();) {
        Connection& c = *open[i];
        serve_one(c.region, c.id, c.log_bytes);
        if (--c.remaining > 0) {
          ++i;
          continue;
        }
        log_bytes_ += c.log_bytes;
        if (opened < connections) open[i++] = open_one();  // closes c: its pool dies
        else open.erase(open.begin() + static_cast<std::ptrdiff_t>(i));
      }
    }
    sum_.add(requests_);
    sum_.add(bytes_in_);
    sum_.add(bytes_out_);
    sum_.add(log_bytes_);
    std::printf("server: %llu connections, %llu requests, %llu bytes in, %llu bytes out\n",
                static_cast<unsigned long long>(opened), static_cast<unsigned long long>(requests_),
                static_cast<unsigned long long>(bytes_in_), static_cast<unsigned long long>(bytes_out_));
    return sum_.value();
  }

 private:
  void serve_one(P& connection_region, std::uint64_t connection_id, std::uint64_t& log_bytes) {
    Pool<P> connection{connection_region};
    const RawRequest raw = read_request(connection, rng_, corpus_, requests_);
    bytes_in_ += raw.head_size + raw.body_size;
    {
      P request_region(connection_region);
      Pool<P> request{request_region};
      Buffer<P> response(request, 512);
      const int status = handle(request, raw, response);
      // "Send" it, then it is dead.
      const std::size_t sent = response.view().size();
      sum_.add(digest(response.view()));
      bytes_out_ += sent;
      response.release();
      // The access log line lives as long as the connection.
      char line[160];
      const int n = std::snprintf(line, sizeof line, "conn %llu req %llu status %d bytes %zu",
                                  static_cast<unsigned long long>(connection_id),
                                  static_cast<unsigned long long>(requests_), status, sent);
      log_bytes += std::strlen(connection.strdup(std::string_view(line, static_cast<std::size_t>(n))));
    }  // the request pool dies here
    // The input is consumed: its blocks are dead.
    for (InputBlock* block = raw.first; block != nullptr;) {
      InputBlock* next = block->next;
      connection.release(block);
      block = next;
    }
    ++requests_;
  }

  // Parses the raw request and builds the response; returns the status.
  int handle(Pool<P> pool, const RawRequest& raw, Buffer<P>& response) {
    std::string_view head = raw.head();

    // Request line and headers, copied into the request pool (Apache's
    // read_request_line and ap_get_mime_headers).
    const std::string_view line = next_line(head);
    const std::size_t sp1 = line.find(' '), sp2 = line.rfind(' ');
    const char* method = pool.strdup(line.substr(0, sp1));
    const char* uri = pool.strdup(line.substr(sp1 + 1, sp2 - sp1 - 1));
    const char* protocol = pool.strdup(line.substr(sp2 + 1));
    Table<P> headers(pool);
    while (!head.empty()) {
      const std::string_view h = next_line(head);
      if (h.empty()) break;
      const std::size_t colon = h.find(':');
      headers.add(pool.lowercase(h.substr(0, colon)), pool.strdup(h.substr(colon + 2)));
    }
    std::string_view path = uri, query;
    if (const std::size_t q = path.find('?'); q != std::string_view::npos) {
      query = path.substr(q + 1);
      path = path.substr(0, q);
    }
    Table<P> cookies(pool);
    if (const char* cookie = headers.get("cookie")) parse_pairs(pool, cookies, cookie, ';');

    Buffer<P> content(pool, 256);
    int status = 200;
    const char* type = "text/html";
    if (path.starts_with("/static/")) {
      serve_file(pool, path, content);
    } else if (path.starts_with("/api/")) {
      type = "application/json";
      serve_api(pool, path.substr(5), query, headers, cookies, content);
    } else if (path.starts_with("/upload/") && std::string_view(method) == "POST") {
      type = "text/plain";
      serve_upload(pool, headers, raw, content);
    } else {
      status = 404;
      content.append("<html><body>Not Found: ");
      content.append(path);
      content.append("</body></html>\n");
    }

    response.append(protocol);
    response.append(status == 200 ? " 200 OK\r\n" : " 404 Not Found\r\n");
    Table<P> out(pool);
    out.add("Server", "strata-wl-server/1.0");
    out.add("Content-Type", type);
    char length[24];
    std::snprintf(length, sizeof length, "%zu", content.view().size());
    out.add("Content-Length", pool.strdup(length));
    if (const char* session = cookies.get("session")) out.add("X-Session", session);
    if (const char* host = headers.get("host")) out.add("X-Host", host);
    out.add("Connection", "keep-alive");
    for (std::size_t i = 0; i < out.size(); ++i) {
      response.append(out.key(i));
      response.append(": ");
      response.append(out.value(i));
      response.append("\r\n");
    }
    response.append("\r\n");
    response.append(content.view());
    content.release();  // copied into the response: dead
    return status;
  }

  // A static file: read into memory (content made up from its name), then
  // copied into the response body.
  void serve_file(Pool<P> pool, std::string_view path, Buffer<P>& content) {
    const std::uint64_t h = digest(path);
    const std::size_t size = 2048 + h % (40 * 1024);
    auto* file = static_cast<char*>(pool.allocate(size));
    std::uint64_t x = h | 1;
    for (std::size_t i = 0; i < size; i += 8) {  // eight letters A..` per step
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      const std::uint64_t letters = (x & 0x1F1F1F1F1F1F1F1FULL) + 0x4141414141414141ULL;
      std::memcpy(file + i, &letters, std::min<std::size_t>(8, size - i));
    }
    content.append("<html><head><title>");
    content.append(path);
    content.append("</title></head><body>\n");
    for (std::size_t at = 0; at < size; at += 4096) content.append(std::string_view(file + at, std::min<std::size_t>(4096, size - at)));
    content.append("\n</body></html>\n");
    pool.release(file);  // copied: dead
  }

  // The API: query parameters and a CGI-style environment of the headers.
  void serve_api(Pool<P> pool, std::string_view op, std::string_view query, const Table<P>& headers,
                 const Table<P>& cookies, Buffer<P>& content) {
    Table<P> params(pool);
    parse_pairs(pool, params, query, '&');
    // ap_add_common_vars: HTTP_<HEADER> for every header.
    Table<P> env(pool);
    for (std::size_t i = 0; i < headers.size(); ++i) {
      const std::string_view key = headers.key(i);
      auto* name = static_cast<char*>(pool.allocate(key.size() + 6));
      std::memcpy(name, "HTTP_", 5);
      for (std::size_t j = 0; j < key.size(); ++j)
        name[5 + j] = key[j] == '-' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(key[j])));
      name[5 + key.size()] = '\0';
      env.add(name, headers.value(i));
    }
    env.add("REQUEST_METHOD", "GET");
    env.add("QUERY_STRING", pool.strdup(query));
    content.append("{\"op\":\"");
    content.append(op);
    content.append("\"");
    const char* x = params.get("x");
    const char* y = params.get("y");
    const char* name = params.get("name");
    if (op == "sum" && x && y) {
      content.append(",\"sum\":");
      content.append_number(std::strtoull(x, nullptr, 10) + std::strtoull(y, nullptr, 10));
    } else if (op == "concat" && name) {
      content.append(",\"concat\":\"");
      for (std::uint64_t i = 0, n = x ? std::strtoull(x, nullptr, 10) % 20 + 1 : 1; i < n; ++i) content.append(name);
      content.append("\"");
    } else {
      const Table<P>& shown = op == "env" ? env : headers;
      content.append(",\"");
      content.append(op);
      content.append("\":{");
      for (std::size_t i = 0; i < shown.size(); ++i) {
        content.append(i ? ",\"" : "\"");
        content.append(shown.key(i));
        content.append("\":\"");
        content.append(shown.value(i));
        content.append("\"");
      }
      content.append("}");
    }
    content.append(",\"cookies\":");
    content.append_number(cookies.size());
    content.append("}\n");
  }

  // An upload: the body read into the request pool (ap_get_client_block),
  // digested, then dead.
  void serve_upload(Pool<P> pool, const Table<P>& headers, const RawRequest& raw, Buffer<P>& content) {
    const char* length = headers.get("content-length");
    const std::size_t n = length ? std::strtoull(length, nullptr, 10) : 0;
    if (n != raw.body_size) throw std::runtime_error("upload: Content-Length does not match the body read");
    auto* copy = static_cast<char*>(pool.allocate(n));
    std::size_t at = 0;
    for (const InputBlock* block = raw.first->next; block != nullptr; block = block->next) {
      std::memcpy(copy + at, block->data, block->size);
      at += block->size;
    }
    const auto lines = static_cast<std::uint64_t>(std::count(copy, copy + n, '\n'));
    const auto words = lines + static_cast<std::uint64_t>(std::count(copy, copy + n, ' '));
    const std::uint64_t hash = digest(std::string_view(copy, n));
    pool.release(copy);
    char text[160];
    std::snprintf(text, sizeof text, "received %zu bytes, %llu words, %llu lines, digest %016llx\n", n,
                  static_cast<unsigned long long>(words), static_cast<unsigned long long>(lines),
                  static_cast<unsigned long long>(hash));
    content.append(text);
  }

  Rng rng_;
  const std::string corpus_;  // what clients upload: made once, not per request
  P server_region_;  // the server's pool: parent of every connection's
  Checksum sum_;
  std::uint64_t requests_ = 0, bytes_in_ = 0, bytes_out_ = 0, log_bytes_ = 0;
};

template <class P>
std::uint64_t serve(const Options& options) {
  Server<P> server(options.seed);
  return server.run(options.scale * kConnectionsPerScale);
}

}  // namespace

int main(int argc, char** argv) {
  return strata::workload::main_with_policies<PoolRegion, MallocRegion, ReapRegion>(
      argc, argv, "server", []<class Policy>(const Options& o) { return serve<Policy>(o); });
}
