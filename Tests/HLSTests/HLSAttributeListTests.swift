import HLS
import XCTest

/// The attribute-list reading every playlist parser shares (pure: text in, values out).
final class HLSAttributeListTests: XCTestCase {
    func testQuotedValuesKeepTheirCommasAndLoseTheirQuotes() {
        let attributes = HLSAttributeList.parse(
            #"BANDWIDTH=5466121,CODECS="avc1.42c028,mp4a.40.2",RESOLUTION=1920x1080,AUDIO="aud""#)
        XCTAssertEqual(attributes, ["BANDWIDTH": "5466121", "CODECS": "avc1.42c028,mp4a.40.2",
                                    "RESOLUTION": "1920x1080", "AUDIO": "aud"])
    }

    func testKeysAreTrimmedAndAKeyWithoutValueIsEmpty() {
        XCTAssertEqual(HLSAttributeList.parse(" TYPE=AUDIO, DEFAULT ,URI=\"a.m3u8\""),
                       ["TYPE": "AUDIO", "DEFAULT": "", "URI": "a.m3u8"])
        XCTAssertEqual(HLSAttributeList.parse(""), [:])
    }

    func testResolutionIsTwoIntegers() {
        XCTAssertEqual(HLSAttributeList.resolution("1920x1080").map { [$0.width, $0.height] }, [1920, 1080])
        XCTAssertEqual(HLSAttributeList.resolution("640X360").map { [$0.width, $0.height] }, [640, 360])
        XCTAssertNil(HLSAttributeList.resolution("1920"))
        XCTAssertNil(HLSAttributeList.resolution("widexhigh"))
    }
}
