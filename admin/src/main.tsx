import { createRoot } from 'react-dom/client'

createRoot(document.getElementById('root')!).render(<p className="p-4 text-indigo-700">Content Service</p>)
