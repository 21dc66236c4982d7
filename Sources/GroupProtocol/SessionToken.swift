/// The secret a member shows in `hello`. 128 random bits as 32 hex digits.
public enum SessionToken {
    public static func generate() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<4).map { _ in
            let word = UInt32.random(in: .min ... .max, using: &generator)
            let hex = String(word, radix: 16)
            return String(repeating: "0", count: 8 - hex.count) + hex
        }.joined()
    }

    /// Compares without stopping at the first difference (the time taken does not tell how much of it matched).
    public static func matches(_ offered: String, _ expected: String) -> Bool {
        let a = Array(offered.utf8), b = Array(expected.utf8)
        var difference = UInt8(a.count == b.count ? 0 : 1)
        for i in 0..<max(a.count, b.count) {
            difference |= (i < a.count ? a[i] : 0) ^ (i < b.count ? b[i] : 0)
        }
        return difference == 0 && !expected.isEmpty
    }
}
