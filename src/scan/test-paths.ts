const TEST_DIR = /(^|\/)(tests?|__tests__|specs?|e2e|testing|testdata|fixtures)\//i;
const TEST_FILE = /(\.(test|spec)\.[^/]+$)|((^|\/)test_[^/]+\.py$)|(_test\.(py|go|rb|exs?)$)|((Tests?|Spec)\.(java|kt|cs|scala|swift)$)|(_spec\.rb$)/;

/** True for paths that hold tests, by the conventions of the common ecosystems. */
export function isTestPath(path: string): boolean {
  return TEST_DIR.test(path) || TEST_FILE.test(path);
}
