// Compiled with -g by profile-join.test: a raw frame in this binary is
// symbolized through its DWARF.
int work(int n) {
  int s = 0;
  for (int i = 0; i < n; ++i)
    s += i;
  return s;
}
int main() { return work(3) == 3 ? 0 : 1; }
