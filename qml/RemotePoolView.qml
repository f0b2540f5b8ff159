import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Weir

// The pool monitor for a remote engine (App.remotePool): the gauges the
// server exposes, each marked with where it was read, "not exposed" for the
// rest, whether the conversations run at once fit there, and the notes. The
// model polls only while this view is on screen.
Rectangle {
    id: view
    objectName: "remotePoolView"
    color: Theme.window
    readonly property var rp: App.remotePool

    Binding { target: App.remotePool; property: "active"; value: view.visible }

    ScrollView {
        anchors.fill: parent
        contentWidth: availableWidth

        ColumnLayout {
            width: Math.min(1100, parent.width - 48)
            x: (parent.width - width) / 2
            spacing: 16

            RowLayout {
                Layout.topMargin: 24
                Layout.fillWidth: true
                PageHeader {
                    title: qsTr("Pool monitor \u2014 %1").arg(view.rp.endpointName)
                    subtitle: (view.rp.model.length > 0 ? qsTr("%1 at %2").arg(view.rp.model).arg(view.rp.serverUrl) : view.rp.serverUrl)
                              + " \u00b7 " + (view.rp.hasData ? qsTr("read from %1").arg(view.rp.source) : qsTr("reading\u2026"))
                }
                MonitorEngineChooser { Layout.alignment: Qt.AlignTop }
            }

            GridLayout {
                objectName: "remoteGauges"
                Layout.fillWidth: true
                columns: view.width > 900 ? 5 : 2
                columnSpacing: 16
                rowSpacing: 16
                Repeater {
                    model: view.rp.gauges
                    delegate: Card {
                        id: tile
                        required property var modelData
                        objectName: "remoteGauge_" + modelData.key
                        Layout.fillWidth: true
                        Layout.preferredWidth: 1
                        implicitHeight: tileColumn.implicitHeight + 32
                        ColumnLayout {
                            id: tileColumn
                            anchors.fill: parent
                            spacing: 6
                            Label { text: tile.modelData.label; color: Theme.muted; font.pixelSize: Theme.smallSize }
                            RowLayout {
                                Layout.fillWidth: true
                                spacing: 6
                                Label {
                                    objectName: "remoteGaugeValue"
                                    text: view.rp.hasData ? tile.modelData.text : "\u2014"
                                    font.pixelSize: Theme.titleSize + 2
                                    font.weight: tile.modelData.exposed ? Font.DemiBold : Font.Normal
                                    color: tile.modelData.exposed ? Theme.text : Theme.faint
                                }
                                Label {
                                    Layout.fillWidth: true
                                    Layout.alignment: Qt.AlignBaseline
                                    text: tile.modelData.detail
                                    color: Theme.muted
                                    font.pixelSize: Theme.smallSize - 1
                                    elide: Text.ElideRight
                                }
                            }
                            // Always laid out, so every tile has the same height.
                            Rectangle {
                                Layout.fillWidth: true
                                opacity: tile.modelData.fraction >= 0 ? 1 : 0
                                height: 6; radius: 3
                                color: Theme.poolFree
                                Rectangle {
                                    width: parent.width * Math.min(1, Math.max(0, tile.modelData.fraction))
                                    height: parent.height; radius: 3
                                    color: Theme.poolUsed
                                }
                            }
                            Label {
                                visible: view.rp.hasData
                                text: tile.modelData.exposed ? qsTr("from %1").arg(tile.modelData.source) : qsTr("%1 does not say").arg(tile.modelData.source)
                                color: Theme.faint
                                font.pixelSize: Theme.smallSize - 2
                                elide: Text.ElideRight
                                Layout.fillWidth: true
                            }
                        }
                    }
                }
            }

            // Whether the conversations run at once fit there.
            Card {
                Layout.fillWidth: true
                ColumnLayout {
                    width: parent.width
                    spacing: 8
                    RowLayout {
                        Layout.fillWidth: true
                        spacing: 12
                        Label { text: qsTr("Sizing"); font.weight: Font.DemiBold; color: Theme.text; Layout.fillWidth: true }
                        Label { text: qsTr("Conversations at once"); color: Theme.muted; font.pixelSize: Theme.smallSize }
                        SpinBox {
                            objectName: "remoteConversationsField"
                            from: 1; to: 1024
                            editable: true
                            value: view.rp.conversationsAtOnce
                            onValueModified: view.rp.conversationsAtOnce = value
                            Accessible.name: qsTr("Conversations at once")
                        }
                    }
                    RowLayout {
                        Layout.fillWidth: true
                        spacing: 8
                        Icon { visible: view.rp.sizingWarns; name: "warning"; size: 16; color: Theme.warning; Layout.alignment: Qt.AlignTop }
                        Label {
                            objectName: "remoteSizingLine"
                            Layout.fillWidth: true
                            text: view.rp.sizing
                            wrapMode: Text.Wrap
                            color: view.rp.sizingWarns ? Theme.warning : Theme.muted
                        }
                    }
                    Label {
                        Layout.fillWidth: true
                        visible: view.rp.contextLength > 0
                        text: qsTr("Context length of %1: %2 tokens (from /v1/models)").arg(view.rp.model).arg(App.formatNumber(view.rp.contextLength))
                        color: Theme.faint
                        font.pixelSize: Theme.smallSize - 1
                    }
                }
            }

            Card {
                Layout.fillWidth: true
                Layout.bottomMargin: 24
                visible: view.rp.notes.length > 0 || view.rp.loadedModels.length > 0
                ColumnLayout {
                    width: parent.width
                    spacing: 4
                    Label { text: qsTr("Notes"); font.weight: Font.DemiBold; color: Theme.text }
                    Label {
                        visible: view.rp.loadedModels.length > 0
                        Layout.fillWidth: true
                        text: qsTr("Loaded: %1").arg(view.rp.loadedModels.join(", "))
                        color: Theme.text
                        wrapMode: Text.Wrap
                    }
                    Repeater {
                        model: view.rp.notes
                        Label {
                            required property string modelData
                            Layout.fillWidth: true
                            text: "\u2022 " + modelData
                            color: Theme.muted
                            wrapMode: Text.Wrap
                            font.pixelSize: Theme.smallSize
                        }
                    }
                }
            }
        }
    }
}
