import QtQuick
import QtTest
import Weir

// EndpointPanel on the fake engine (which cannot be served over HTTP): the
// switch turns the endpoint on, the reason it cannot listen shows in place,
// the URL row stays hidden, asking for other computers shows the warning, and
// the web pages (CORS) field takes origins or says why not.
Item {
    id: root
    width: 600; height: 500

    TestCase {
        name: "EndpointPanel"
        when: windowShown

        Component { id: panelComponent; EndpointPanel { width: 520 } }

        function test_switchShowsWhyItCannotListen() {
            tryCompare(App.engine, "ready", true, 10000)
            const panel = createTemporaryObject(panelComponent, root)
            verify(panel)
            const sw = findChild(panel, "endpointSwitch")
            verify(sw)
            compare(sw.checked, false)
            mouseClick(sw)
            compare(App.endpoint.enabled, true)
            const error = findChild(panel, "endpointError")
            tryVerify(function() { return error.visible && error.text.indexOf("cannot be served") >= 0 }, 5000)
            compare(findChild(panel, "endpointUrl").visible, false)
            compare(App.endpoint.listening, false)

            const network = findChild(panel, "endpointNetworkBox")
            mouseClick(network)
            compare(App.endpoint.allowNetwork, true)
            compare(App.endpoint.host, "0.0.0.0")
            App.endpoint.allowNetwork = false
            App.endpoint.enabled = false
            tryCompare(error, "visible", false)
        }

        // The web pages field: typed origins are taken (normalised); a typo
        // shows why in place and leaves the list as it was.
        function test_webPagesField() {
            const panel = createTemporaryObject(panelComponent, root)
            const field = findChild(panel, "endpointCorsField")
            verify(field)
            compare(field.text, "")
            field.forceActiveFocus()
            field.text = "https://App.example/"
            field.editingFinished()
            compare(App.endpoint.corsOrigins, "https://app.example")
            const cors = findChild(panel, "endpointCorsError")
            compare(cors.visible, false)
            field.text = "app.example"
            field.editingFinished()
            compare(App.endpoint.corsOrigins, "https://app.example")
            tryCompare(cors, "visible", true)
            verify(cors.text.indexOf("not an origin") >= 0)
            App.endpoint.corsOrigins = ""
            compare(App.endpoint.corsOrigins, "")
            compare(cors.visible, false)
        }
    }
}
