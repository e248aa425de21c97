/* A C program for tests/programs (gcc case): compiled by gcc with and without
 * a preloaded malloc; the object files and the program's output must match. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct node {
  struct node *left, *right;
  uint64_t key;
  int height;
} node;

static int height(const node *n) { return n ? n->height : 0; }
static int max_int(int a, int b) { return a > b ? a : b; }
static void update(node *n) { n->height = 1 + max_int(height(n->left), height(n->right)); }

static node *rotate_right(node *y) {
  node *x = y->left;
  y->left = x->right;
  x->right = y;
  update(y);
  update(x);
  return x;
}

static node *rotate_left(node *x) {
  node *y = x->right;
  x->right = y->left;
  y->left = x;
  update(x);
  update(y);
  return y;
}

static node *insert(node *n, uint64_t key) {
  if (n == NULL) {
    node *fresh = calloc(1, sizeof *fresh);
    if (fresh == NULL) abort();
    fresh->key = key;
    fresh->height = 1;
    return fresh;
  }
  if (key < n->key) n->left = insert(n->left, key);
  else if (key > n->key) n->right = insert(n->right, key);
  else return n;
  update(n);
  int balance = height(n->left) - height(n->right);
  if (balance > 1 && key < n->left->key) return rotate_right(n);
  if (balance < -1 && key > n->right->key) return rotate_left(n);
  if (balance > 1) {
    n->left = rotate_left(n->left);
    return rotate_right(n);
  }
  if (balance < -1) {
    n->right = rotate_right(n->right);
    return rotate_left(n);
  }
  return n;
}

static uint64_t sum_inorder(const node *n, uint64_t *count) {
  if (n == NULL) return 0;
  uint64_t s = sum_inorder(n->left, count);
  ++*count;
  s = s * 31 + n->key;
  return s + sum_inorder(n->right, count);
}

static void destroy(node *n) {
  if (n == NULL) return;
  destroy(n->left);
  destroy(n->right);
  free(n);
}

static int compare_words(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(void) {
  uint64_t x = 88172645463325252ull;
  node *root = NULL;
  for (int i = 0; i < 50000; i++) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    root = insert(root, x % 1000003);
  }
  uint64_t count = 0;
  uint64_t sum = sum_inorder(root, &count);
  printf("tree: %llu keys, height %d, checksum %llu\n", (unsigned long long)count, height(root),
         (unsigned long long)sum);
  destroy(root);

  enum { kWords = 20000 };
  char **words = malloc(kWords * sizeof *words);
  if (words == NULL) return 1;
  for (int i = 0; i < kWords; i++) {
    words[i] = malloc(16);
    if (words[i] == NULL) return 1;
    snprintf(words[i], 16, "w%07d", (i * 7919) % kWords);
  }
  qsort(words, kWords, sizeof *words, compare_words);
  printf("words: first %s last %s middle %s\n", words[0], words[kWords - 1], words[kWords / 2]);
  for (int i = 0; i < kWords; i++) free(words[i]);
  free(words);
  return 0;
}
