/// BlueZ's D-Bus names used by the layer.
public enum BlueZInterface {
    public static let service = "org.bluez"
    public static let adapter = "org.bluez.Adapter1"
    public static let device = "org.bluez.Device1"
    public static let gattService = "org.bluez.GattService1"
    public static let gattCharacteristic = "org.bluez.GattCharacteristic1"
    public static let gattDescriptor = "org.bluez.GattDescriptor1"
    public static let gattManager = "org.bluez.GattManager1"
    public static let gattProfile = "org.bluez.GattProfile1"
    public static let advertisingManager = "org.bluez.LEAdvertisingManager1"
    public static let objectManager = "org.freedesktop.DBus.ObjectManager"
    public static let properties = "org.freedesktop.DBus.Properties"
}
