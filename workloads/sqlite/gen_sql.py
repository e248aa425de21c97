"""The sqlite workload's SQL script, generated from a seed and a scale.

    python3 gen_sql.py SCALE SEED > script.sql     (or generate(scale, seed, file))

One scale unit is 500 customers, 100 products and 5,000 orders inserted one
statement each (like loading a dump), then indexed lookups, three-way joins,
updates, deletes and string functions over them, and final aggregates. Each
query after the load touches a bounded number of rows (a key lookup or a
range of keys), so the work grows linearly with the scale. Every
query's result is deterministic (integers and text only, ORDER BY wherever
more than one row comes back), so the rows digest to the same checksum in
every mode. The random source is splitmix64, not Python's `random`, so the
script is the same under any Python version.
"""
import sys

CITIES = ["Amherst", "Boston", "Cambridge", "Denver", "Eugene", "Fresno", "Galway", "Houston", "Ithaca",
          "Juneau", "Kyoto", "Lima", "Madrid", "Nairobi", "Oslo", "Porto"]
CATEGORIES = ["books", "games", "garden", "kitchen", "music", "sports", "tools", "toys"]
SYLLABLES = ["ka", "lo", "mi", "nu", "pe", "ra", "si", "to", "va", "ze", "bri", "dan", "fel", "gor", "hul"]
MASK = (1 << 64) - 1


class SplitMix64:
    def __init__(self, seed):
        self.state = seed & MASK

    def next(self):
        self.state = (self.state + 0x9E3779B97F4A7C15) & MASK
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        return z ^ (z >> 31)

    def below(self, n):
        return self.next() % n

    def word(self, syllables=3):
        return "".join(SYLLABLES[self.below(len(SYLLABLES))] for _ in range(1 + self.below(syllables)))


def quote(text):
    return "'" + text.replace("'", "''") + "'"


def generate(scale, seed, out):
    rng = SplitMix64(seed)
    customers, products, orders = 500 * scale, 100 * scale, 5000 * scale
    w = out.write
    w("CREATE TABLE customers(id INTEGER PRIMARY KEY, name TEXT NOT NULL, city TEXT NOT NULL, "
      "email TEXT NOT NULL, joined INTEGER NOT NULL);\n"
      "CREATE TABLE products(id INTEGER PRIMARY KEY, title TEXT NOT NULL, category TEXT NOT NULL, "
      "price_cents INTEGER NOT NULL);\n"
      "CREATE TABLE orders(id INTEGER PRIMARY KEY, customer_id INTEGER NOT NULL, product_id INTEGER NOT NULL, "
      "qty INTEGER NOT NULL, note TEXT NOT NULL);\n"
      "CREATE INDEX customers_city ON customers(city);\n"
      "CREATE INDEX products_category ON products(category);\n"
      "BEGIN;\n")
    for i in range(1, customers + 1):
        name = rng.word().capitalize() + " " + rng.word().capitalize()
        city = CITIES[rng.below(len(CITIES))]
        w(f"INSERT INTO customers VALUES({i}, {quote(name)}, {quote(city)}, "
          f"{quote(name.lower().replace(' ', '.') + '@' + city.lower() + '.example')}, {rng.below(3650)});\n")
    for i in range(1, products + 1):
        w(f"INSERT INTO products VALUES({i}, {quote(rng.word(4) + ' ' + rng.word(2))}, "
          f"{quote(CATEGORIES[rng.below(len(CATEGORIES))])}, {100 + rng.below(20000)});\n")
    for i in range(1, orders + 1):
        w(f"INSERT INTO orders VALUES({i}, {1 + rng.below(customers)}, {1 + rng.below(products)}, "
          f"{1 + rng.below(9)}, {quote(rng.word(5))});\n")
    w("COMMIT;\n"
      # Indexes built after the load, as a dump restore does.
      "CREATE INDEX orders_customer ON orders(customer_id);\n"
      "CREATE INDEX orders_product ON orders(product_id);\n")
    for _ in range(300 * scale):  # indexed lookups
        k = 1 + rng.below(customers)
        w(f"SELECT count(*), coalesce(sum(qty), 0) FROM orders WHERE customer_id = {k};\n")
        w(f"SELECT name, email FROM customers WHERE id = {k};\n")
    for _ in range(40 * scale):  # three-way joins over a range of customers (an index range scan)
        k = 1 + rng.below(customers)
        w("SELECT c.city, p.category, count(*), sum(o.qty * p.price_cents) FROM orders o "
          "JOIN customers c ON c.id = o.customer_id JOIN products p ON p.id = o.product_id "
          f"WHERE o.customer_id BETWEEN {k} AND {k + 40} GROUP BY c.city, p.category "
          "ORDER BY c.city, p.category;\n")
    w("BEGIN;\n")
    for _ in range(200 * scale):  # updates
        k = 1 + rng.below(customers)
        w(f"UPDATE orders SET qty = qty + 1, note = note || '+' WHERE customer_id = {k};\n")
        w(f"UPDATE customers SET email = lower(substr(name, 1, instr(name, ' ') - 1)) || '@' || "
          f"lower(city) || '.example' WHERE id = {k};\n")
    for _ in range(100 * scale):  # deletes: single orders and small ranges
        k = 1 + rng.below(orders)
        w(f"DELETE FROM orders WHERE id = {k};\n")
        w(f"DELETE FROM orders WHERE id BETWEEN {k} AND {k + rng.below(5)} AND qty > 5;\n")
    w("COMMIT;\n")
    for r in range(40 * scale):  # string functions over ranges of the primary keys
        k, j = 1 + rng.below(customers), 1 + rng.below(products)
        w(f"SELECT id, upper(substr(name, 1, 3)) || '-' || length(email), replace(email, '.example', '.test'), "
          f"printf('%08d|%s', joined, rotated_city) FROM (SELECT *, "
          f"substr(city, length(city)) || substr(city, 1, length(city) - 1) AS rotated_city FROM customers "
          f"WHERE id BETWEEN {k} AND {k + 60}) WHERE id % 3 = {r % 3} ORDER BY id;\n")
        w(f"SELECT category, group_concat(title, ',') FROM (SELECT category, title FROM products "
          f"WHERE id BETWEEN {j} AND {j + 30} ORDER BY id) GROUP BY category ORDER BY category;\n")
    w("SELECT count(*), sum(qty), sum(length(note)) FROM orders;\n"
      "SELECT city, count(*), sum(length(email)) FROM customers GROUP BY city ORDER BY city;\n"
      "SELECT p.category, count(*), sum(o.qty) FROM orders o JOIN products p ON p.id = o.product_id "
      "GROUP BY p.category ORDER BY p.category;\n")


if __name__ == "__main__":
    generate(int(sys.argv[1]), int(sys.argv[2]), sys.stdout)
